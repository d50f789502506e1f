"""Providers from `providers/` folders (plugins, the notebook folder): classes with a `prefix` attribute and
the a0nb provider methods, and Crystal Lattice `ProviderPlugin` classes whose `name` is the prefix."""
from __future__ import annotations

from typing import Any

from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for

_METHODS = ("init", "initialize_request", "stream", "process_chunk", "finalize")


class ProviderTable(dict):  # type: ignore[type-arg]
    """`{prefix: provider class or factory(model, workdir)}`; `broken` names the providers/*.py files that did
    not load, so a spec whose prefix they might have declared fails with their error instead of going to litellm."""

    broken: list[str]

    def __init__(self) -> None:
        super().__init__()
        self.broken = []


def discover_providers(hierarchy: Hierarchy, loader: ModuleLoader, registry: Any = None) -> ProviderTable:
    def build() -> ProviderTable:
        from a0nb.providers.lattice_discovery import discover_lattice, lattice_factories
        found = ProviderTable()
        for root, folder in hierarchy.dirs("providers"):
            for path in sorted(folder.glob("*.py")):
                module = loader.load(path, module_name_for(root.path, path), "provider")
                if module is None:
                    continue
                for obj in vars(module).values():
                    if _is_provider_class(obj, module.__name__) and obj.prefix not in found:
                        found[obj.prefix] = obj
        for name, factory in lattice_factories(hierarchy, loader).items():
            found.setdefault(name, factory)
        found.broken = list(discover_lattice(hierarchy, loader).broken)
        return found
    table = hierarchy.memo(("providers",), build)
    if registry is None or not registry.providers:
        return table
    from a0nb.providers.lattice_discovery import lattice_factories
    merged = ProviderTable()
    merged.update(table)
    merged.update(lattice_factories(hierarchy, loader, registry))
    merged.broken = table.broken
    return merged


def _is_provider_class(obj: Any, module_name: str) -> bool:
    return (isinstance(obj, type) and getattr(obj, "__module__", "") == module_name
            and isinstance(getattr(obj, "prefix", None), str) and all(hasattr(obj, m) for m in _METHODS))
