"""Where Crystal Lattice plugins come from: `ProviderPlugin` classes with a `name` and
`ProviderExtensionPlugin` classes in `providers/*.py`, `FeaturePlugin` classes in `features/*.py` (one copy
per file name, the highest root's; file-name order), and plugins registered from Python."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from a0nb.files.contracts import ContractError, check_class
from a0nb.files.feature_plugin import FEATURE_REQUIRED, FEATURE_SIGNATURES, FeaturePlugin
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.loader import ModuleLoader, module_name_for, subclasses_in
from a0nb.providers.lattice import Loaded
from a0nb.providers.plugin_api import (EXTENSION_REQUIRED, EXTENSION_SIGNATURES, PROVIDER_REQUIRED,
                                       PROVIDER_SIGNATURES, ProviderExtensionPlugin, ProviderPlugin)

# kind -> (base class, required methods, signatures, contract name)
KINDS: dict[str, tuple[type, Sequence[Any], dict[str, str], str]] = {
    "provider": (ProviderPlugin, PROVIDER_REQUIRED, PROVIDER_SIGNATURES, "ProviderPlugin"),
    "extension": (ProviderExtensionPlugin, EXTENSION_REQUIRED, EXTENSION_SIGNATURES, "ProviderExtensionPlugin"),
    "feature": (FeaturePlugin, FEATURE_REQUIRED, FEATURE_SIGNATURES, "FeaturePlugin"),
}


def instantiate(kind: str, cls: type, path: Path | None = None, root_label: str = "registered in the notebook") -> Loaded:
    """Check `cls` against its contract and make the instance; ContractError names the file and what is missing."""
    base, required, signatures, contract = KINDS[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ContractError(f"{cls!r} is not a {contract} subclass (from a0nb.ext import {contract}, or, in a Crystal "
                            f"Lattice plugin, from agent_core.types import {contract})")
    check_class(cls, base, contract, required, signatures, path)
    if kind == "provider" and not getattr(cls, "name", ""):
        raise ContractError(f"{cls.__qualname__} ({path or 'registered in the notebook'}) has no `name`: a "
                            "ProviderPlugin's `name` is its model prefix (name = \"echo\" -> model \"echo:echo-1\")")
    try:
        return Loaded(cls(), path, root_label)
    except Exception as exc:
        raise ContractError(f"{cls.__qualname__}() ({path or 'registered in the notebook'}) failed: "
                            f"{type(exc).__name__}: {exc}; {contract} classes are made without arguments") from exc


@dataclass
class LatticeFound:
    providers: dict[str, Loaded] = field(default_factory=dict)
    extensions: list[Loaded] = field(default_factory=list)
    features: list[Loaded] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)   # `path: reason` of providers/*.py that did not load


def _winning_copies(folders: Iterable[tuple[str, Path, Path]]) -> list[tuple[str, Path, list[tuple[str, Path]]]]:
    """(file name, root path, copies) per file name in file-name order; copies are (root label, path), best first."""
    copies: dict[str, list[tuple[str, Path, Path]]] = {}
    for label, root_path, folder in folders:
        for path in sorted(folder.glob("*.py")):
            if not path.name.startswith("__"):
                copies.setdefault(path.name, []).append((label, root_path, path))
    return [(n, c[0][1], [(lbl, p) for lbl, _, p in c]) for n, c in sorted(copies.items())]


def _scan(folders: list[tuple[str, Path, Path]], loader: ModuleLoader, kinds: Sequence[str], found: LatticeFound,
          area: str) -> None:
    by_root = {path: root for _, root, path in folders}
    for _name, _root, copies in _winning_copies(folders):
        for label, path in copies:
            module = loader.load(path, module_name_for(by_root.get(path.parent, path.parent), path), area)
            if module is None:
                reason = next((d.message for d in loader.diagnostics if d.path == str(path)), "failed to import")
                found.broken.append(f"{path}: {reason}")
                continue  # a lower copy of the same file name may still load
            for kind in kinds:
                for cls in subclasses_in(module, KINDS[kind][0]):
                    if kind == "provider" and not getattr(cls, "name", ""):
                        continue  # a base class for other providers (the model prefix is the `name`)
                    try:
                        loaded = instantiate(kind, cls, path, label)
                    except ContractError as exc:
                        loader.diagnostics.add("error", area, str(exc), path, fix=f"see help(a0nb.ext.{KINDS[kind][3]})")
                        found.broken.append(f"{path}: {exc}")
                        continue
                    if kind == "provider":
                        found.providers.setdefault(str(cls.name), loaded)  # type: ignore[attr-defined]
                    elif kind == "extension":
                        found.extensions.append(loaded)
                    else:
                        found.features.append(loaded)
            break


def discover_lattice(hierarchy: Hierarchy, loader: ModuleLoader) -> LatticeFound:
    def build() -> LatticeFound:
        found = LatticeFound()
        providers = [(root.label, root.path, folder) for root, folder in hierarchy.dirs("providers")]
        features = [(root.label, root.path, folder) for root, folder in hierarchy.dirs("features")]
        _scan(providers, loader, ("provider", "extension"), found, "provider")
        _scan(features, loader, ("feature",), found, "feature")
        return found
    return hierarchy.memo(("lattice-plugins",), build)


def discover_lattice_features(hierarchy: Hierarchy, loader: ModuleLoader) -> list[Loaded]:
    """Only the FeaturePlugins of the `features/` folders (they run around every provider): no providers/*.py
    is imported for them."""
    def build() -> list[Loaded]:
        found = LatticeFound()
        _scan([(root.label, root.path, folder) for root, folder in hierarchy.dirs("features")], loader, ("feature",),
              found, "feature")
        return found.features
    return hierarchy.memo(("lattice-features",), build)


class LatticeRegistry:
    """Plugins registered from Python (`agent.register_provider(EchoProvider, extensions=[PrefixExtension])`)."""

    def __init__(self) -> None:
        self.providers: dict[str, tuple[Loaded, list[Loaded]]] = {}
        self.features: list[Loaded] = []
        self.extensions: list[Loaded] = []   # for every provider (from plugin_sources)
        self.version = 0

    def register_provider(self, cls: type, extensions: Sequence[type] = ()) -> Loaded:
        loaded = instantiate("provider", cls)
        self.providers[str(loaded.instance.name)] = (loaded, [instantiate("extension", e) for e in extensions])
        self.version += 1
        return loaded

    def register_extension(self, cls: type) -> Loaded:
        loaded = instantiate("extension", cls)
        self.extensions = [e for e in self.extensions if type(e.instance) is not cls] + [loaded]
        self.version += 1
        return loaded

    def register_feature(self, cls: type) -> Loaded:
        loaded = instantiate("feature", cls)
        self.features = [f for f in self.features if type(f.instance) is not cls] + [loaded]
        self.version += 1
        return loaded


def lattice_factories(hierarchy: Hierarchy, loader: ModuleLoader,
                      registry: LatticeRegistry | None = None) -> dict[str, Callable[[str, Path], Any]]:
    """`{prefix: factory(model, workdir)}` for every Crystal Lattice provider (registered ones win)."""
    from a0nb.providers.lattice_provider import LatticeProvider
    found = discover_lattice(hierarchy, loader)
    out: dict[str, Callable[[str, Path], Any]] = {}

    def factory(name: str, registered: bool) -> Callable[[str, Path], Any]:
        def chain() -> tuple[Loaded, list[Loaded], list[Loaded]]:
            now = discover_lattice(hierarchy, loader)
            if registered and registry is not None and name in registry.providers:
                plugin, bound = registry.providers[name]
            elif name in now.providers:
                plugin, bound = now.providers[name], []
            else:
                raise ContractError(f"the provider {name!r} is gone from the providers/ folders"
                                    + (" (" + "; ".join(now.broken) + ")" if now.broken else ""))
            extra = registry.extensions if registry else []
            return plugin, [*bound, *now.extensions, *extra], [*now.features, *(registry.features if registry else [])]
        return lambda model, workdir: LatticeProvider(name, model, chain)

    for name in found.providers:
        out[name] = factory(name, False)
    for name in (registry.providers if registry else {}):
        out[name] = factory(name, True)
    return out


__all__ = ["LatticeFound", "LatticeRegistry", "discover_lattice", "discover_lattice_features", "lattice_factories", "instantiate"]
