"""Providers from `providers/` folders (plugins, the notebook folder): classes with a `prefix`
attribute and the provider methods; the prefix of a model spec selects them."""
from __future__ import annotations

from typing import Any

from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for

_METHODS = ("init", "initialize_request", "stream", "process_chunk", "finalize")


def discover_providers(hierarchy: Hierarchy, loader: ModuleLoader) -> dict[str, type]:
    def build() -> dict[str, type]:
        found: dict[str, type] = {}
        for root, folder in hierarchy.dirs("providers"):
            for path in sorted(folder.glob("*.py")):
                module = loader.load(path, module_name_for(root.path, path), "provider")
                if module is None:
                    continue
                for obj in vars(module).values():
                    if _is_provider_class(obj, module.__name__) and obj.prefix not in found:
                        found[obj.prefix] = obj
        return found
    return hierarchy.memo(("providers",), build)


def _is_provider_class(obj: Any, module_name: str) -> bool:
    return (isinstance(obj, type) and getattr(obj, "__module__", "") == module_name
            and isinstance(getattr(obj, "prefix", None), str) and all(hasattr(obj, m) for m in _METHODS))
