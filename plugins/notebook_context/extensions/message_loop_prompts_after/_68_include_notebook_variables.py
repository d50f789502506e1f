"""extras_temporary["notebook_variables"]: the notebook's own variables with type and size."""
import inspect
import types

from a0nb.ext import Extension
from a0nb.ext import plugin_config

SKIP = ("In", "Out", "exit", "quit", "get_ipython")


def describe(value):
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{kind} shape={tuple(shape)}"
    try:
        return f"{kind} len={len(value)}"
    except Exception:  # objects without a length are described by their type alone
        return kind


class IncludeNotebookVariables(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        plugin = next((p for p in agent.hierarchy.plugins if p.name == "notebook_context"), None)
        config = plugin_config(plugin, agent.workdir, agent.hierarchy.home, agent.profile, agent.diagnostics) if plugin else {}
        limit = int(config.get("max_variables", 30))
        lines = []
        for name, value in list(agent.namespace.items()):
            if name.startswith("_") or name in SKIP or isinstance(value, types.ModuleType) \
                    or inspect.isroutine(value) or inspect.isclass(value):
                continue
            lines.append(f"{name}: {describe(value)}")
            if len(lines) >= limit:
                lines.append("… (more variables not listed)")
                break
        if lines:
            loop_data.extras_temporary["notebook_variables"] = "\n".join(lines)
