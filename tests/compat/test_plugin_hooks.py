"""`helpers.plugins.call_plugin_hook` runs a function of a plugin's `hooks.py` by name, as upstream (issue 17,
item 6); a missing plugin, file or function gives `default`."""
from __future__ import annotations

from pathlib import Path

import pytest

from a0nb import Agent
from a0nb.compat.helpers.plugins import call_plugin_hook
from a0nb.testing import answer

HOOKS = '''
def install(mode="local", config=None):
    return {"ok": True, "mode": mode, "limit": (config or {}).get("limit")}


def broken():
    raise RuntimeError("hook failed")
'''


def test_call_plugin_hook_runs_hooks_py_by_name(nb: Path) -> None:
    plugin = nb / "plugins" / "budget"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: budget\n", encoding="utf-8")
    (plugin / "hooks.py").write_text(HOOKS, encoding="utf-8")
    agent = Agent(nb, model=[answer("ok")])
    assert call_plugin_hook("budget", "install", mode="cloud", config={"limit": 2}, agent=agent) == \
        {"ok": True, "mode": "cloud", "limit": 2}
    assert call_plugin_hook("budget", "uninstall", default="none", agent=agent) == "none"
    assert call_plugin_hook("missing", "install", default=0, agent=agent) == 0
    assert call_plugin_hook("budget", "broken", default="fallback", raise_on_error=False, agent=agent) == "fallback"
    with pytest.raises(RuntimeError, match="hook failed"):
        call_plugin_hook("budget", "broken", agent=agent)
