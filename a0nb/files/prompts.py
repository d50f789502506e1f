"""The prompt engine: renders prompt files found through the hierarchy (`{{if}}`, placeholders,
includes, `VariablesPlugin` loaders) with provenance and stat-keyed caches (reference §4, ARCHITECTURE §9)."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from a0nb.diagnostics import Diagnostics
from a0nb.errors import PromptError
from a0nb.files.conditions import EvalError, truth
from a0nb.files.prompt_flat import FlatRenders
from a0nb.files.prompt_memo import PromptMemo, RenderCache, render_key
from a0nb.files.prompt_lookup import RACY_NS, PromptDir, PromptFolders, prompt_dirs, valid_name
from a0nb.files.prompt_vars import VariablesLoaders, VariablesPlugin, as_text, py_name
from a0nb.files.rendered import Rendered, Source
from a0nb.files.templates import VAR, If, Include, Node, Template, Text, Var, fence_body, load_template

__all__ = ["VariablesPlugin", "PromptDir", "Source", "Rendered", "PromptEngine", "prompt_dirs"]

_TEXT_CACHE = 64


class _Ctx:
    """One render call: its arguments, what it read, and per-call memo of folder listings."""

    __slots__ = ("agent", "kwargs", "listings", "sources", "unknown", "stack", "loaded")

    def __init__(self, agent: object, kwargs: dict[str, Any]) -> None:
        self.agent, self.kwargs = agent, kwargs
        self.listings: dict[int, frozenset[str]] = {}
        self.sources: dict[tuple[Path, str], Source] = {}
        self.unknown: dict[str, None] = {}
        self.stack: list[tuple[str, Path | None]] = []
        self.loaded: list[tuple[Path, Path, str, dict[str, Any]]] = []  # variables loader calls


# where a file is, its template, its Source, and its variables loader (.py path and Source) if it has one
_Plan = tuple[Path, Template, Source, "tuple[Path, Source] | None"]


@dataclass
class _File:
    """One file being rendered: where it was found and its variables."""

    name: str
    path: Path | None
    index: int  # position in the hierarchy; -1 for render_text
    vars: dict[str, Any]
    json: bool = False
    halted: bool = False

    @property
    def where(self) -> str:
        return str(self.path) if self.path else "<text>"


class PromptEngine:
    """Renders prompt files found in an ordered list of prompt folders, highest priority first."""

    def __init__(self, dirs: Sequence[PromptDir], diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._folders = PromptFolders(dirs)
        self._dir_names = [str(d.path) for d in self._folders.dirs]  # what variables loaders get as backup_dirs
        self._loaders = VariablesLoaders(self.diagnostics)
        self._files: dict[Path, tuple[tuple[int, int] | None, Template]] = {}
        self._texts: dict[str, Template] = {}
        self._renders, self._flat = RenderCache(), FlatRenders()  # (flat: files rendered by substitution)
        self.version = 0  # bumped whenever what the folders hold may have changed (set_dirs, invalidate)
        # while a PromptMemo builds: each render's (loaders it ran, agent, kwargs), None for one not reusable
        self.recording: list[Any] | None = None
        self.reuse = PromptMemo(self)  # reuse(key, inputs, build): a build's result while nothing it read changed
        self._plans: dict[tuple[str, int, str], _Plan] = {}  # while the folders are settled (see _plan)
        self._located: dict[tuple[str, int], int | None] = {}

    @property
    def dirs(self) -> tuple[PromptDir, ...]:
        return self._folders.dirs

    @property
    def trust_listings(self) -> bool:
        """Set by an owner that watches the prompt folders and the files it may edit in them (the agent's
        Hierarchy: every non-bundled root) and calls invalidate() on a change: a cached render is then
        reused without a stat of its files."""
        return self._folders.trust_listings

    @trust_listings.setter
    def trust_listings(self, value: bool) -> None:
        self._folders.trust_listings = self._loaders.trust = self.reuse.active = value

    def set_dirs(self, dirs: Sequence[PromptDir]) -> None:
        self._folders.dirs = tuple(dirs)  # caches are keyed by path, so they stay valid
        self._dir_names = [str(d.path) for d in self._folders.dirs]
        self._renders.clear()  # which copy wins may differ now
        self._forget()

    def _forget(self) -> None:
        for cache in (self._plans, self._located, self._flat):
            cache.clear()
        self._folders.invalidate()
        self.version += 1

    def invalidate(self) -> None:
        """Forget folder listings and renders (the owner saw a change in the hierarchy)."""
        self._loaders.invalidate()
        self._renders.clear()
        self._forget()

    # -- lookup --

    def find(self, name: str) -> PromptDir | None:
        found = self._folders.find_all(name)
        return found[0] if found else None

    def find_all(self, name: str) -> list[PromptDir]:
        return self._folders.find_all(name)

    def names(self, glob: str) -> list[tuple[str, PromptDir]]:
        return self._folders.names(glob)

    def _locate(self, ctx: _Ctx, name: str, start: int) -> int | None:
        key = (name, start)
        found = self._located.get(key, -1)
        if found == -1:
            found = self._folders.locate(ctx.listings, name, start)
            if "/" not in name and "\\" not in name and self._folders.settled():
                self._located[key] = found
        return found

    def _lower(self, ctx: _Ctx, name: str, index: int) -> tuple[Path, ...]:
        return self._folders.lower(ctx.listings, name, index)

    # -- public rendering --

    def render(self, name: str, /, *, agent: object = None, **kwargs: Any) -> Rendered:
        """Render a prompt file (conditionals, placeholders, includes); a fenced-json file loses its fences."""
        if (flat := self._flat.render(self, name, kwargs)) is not None:  # a flat file: its text, values put in
            return flat
        key = render_key(name, kwargs)
        if key is not None:
            hit = self._renders.get(key, self._folders.trust_listings)
            if hit is not None and (not hit[2] or self.vars_unchanged(hit[2], agent, kwargs)):
                if self.recording is not None:
                    self.recording.append((hit[2], agent, kwargs) if hit[2] else ())
                return hit[1]
        ctx = _Ctx(agent, kwargs)
        text = self._top(ctx, name, as_json=False)
        stripped = fence_body(text)
        rendered = self._result(ctx, stripped[0] if stripped else text)
        kept = key is not None and self._renders.remember(key, rendered, ctx.loaded)
        self._flat.learn(self, name, kwargs, rendered, ctx.loaded)
        if self.recording is not None:
            self.recording.append(((tuple(ctx.loaded), agent, kwargs) if ctx.loaded else ()) if kept else None)
        return rendered

    def text(self, name: str, agent: object, kwargs: dict[str, Any]) -> str:
        """`render(name, agent=agent, **kwargs).text`: a flat file's text without building its `Rendered`."""
        flat = self._flat.text(self, name, kwargs)
        return flat if flat is not None else self.render(name, agent=agent, **kwargs).text

    def vars_unchanged(self, loaded: tuple[tuple[Path, Path, str, dict[str, Any]], ...], agent: object,
                   kwargs: dict[str, Any]) -> bool:
        """Run a cached render's variables loaders again: the render stands only if each returns what it did."""
        if not loaded:
            return True
        dirs = list(self._dir_names)
        return all(self._loaders.variables(py, md, dirs, agent, kwargs, name) == got for py, md, name, got in loaded)

    def render_text(self, text: str, /, *, agent: object = None, **kwargs: Any) -> Rendered:
        """Render a string as if it were a file above every prompt folder (no variables loader)."""
        ctx = _Ctx(agent, kwargs)
        tpl = self._texts.get(text)
        if tpl is None:
            tpl = load_template(text.encode("utf-8", "surrogatepass"), "<text>")
            if len(self._texts) >= _TEXT_CACHE:
                self._texts.pop(next(iter(self._texts)))
            self._texts[text] = tpl
        self._report_notes(tpl, "<text>")
        file = _File("<text>", None, -1, dict(kwargs))
        ctx.stack.append(("<text>", None))
        out: list[str] = []
        self._walk(ctx, file, tpl.nodes, out)
        rendered = "".join(out)
        stripped = fence_body(rendered)
        return self._result(ctx, stripped[0] if stripped else rendered)

    def parse(self, name: str, /, *, agent: object = None, **kwargs: Any) -> Any:
        """A fenced-json template → `json.loads` of it with each value JSON-encoded; otherwise `render` text."""
        ctx = _Ctx(agent, kwargs)
        if self.recording is not None:
            self.recording.append(None)  # (not cached)
        index = self._require(ctx, name)
        path = self.dirs[index].path / name
        try:
            is_json = self._load(path).json_body is not None
        except OSError as exc:
            raise PromptError(f"cannot read prompt file {path}: {exc}") from exc
        if not is_json:
            return self.render(name, agent=agent, **kwargs).text
        text = self._top(ctx, name, as_json=True)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise PromptError(f"{path}: the JSON template is not valid JSON after substitution ({exc}):\n{text}") from exc

    def _result(self, ctx: _Ctx, text: str) -> Rendered:
        return Rendered(text, tuple(ctx.sources.values()), tuple(ctx.unknown))

    def _require(self, ctx: _Ctx, name: str) -> int:
        if not valid_name(name):
            raise PromptError(f"invalid prompt name {name!r}: use a file name relative to the prompt folders")
        index = self._locate(ctx, name, 0)
        if index is None:
            searched = "\n".join(f"  {d.label}: {d.path}" for d in self.dirs) or "  (no prompt folders)"
            raise PromptError(f"prompt file {name!r} not found; searched:\n{searched}")
        return index

    def _top(self, ctx: _Ctx, name: str, as_json: bool) -> str:
        index = self._require(ctx, name)
        try:
            return self._render_file(ctx, name, index, "direct", as_json)
        except OSError as exc:
            raise PromptError(f"cannot read prompt file {self.dirs[index].path / name}: {exc}") from exc

    # -- rendering internals --

    def _render_file(self, ctx: _Ctx, name: str, index: int, via: str, as_json: bool = False) -> str:
        path, tpl, source, loader = self._plans.get((name, index, via)) or self._plan(ctx, name, index, via)
        if ctx.stack and any(p == path for _, p in ctx.stack):
            self._cycle(ctx, name, path)
        ctx.sources.setdefault((path, via), source)
        if tpl.notes:
            self._report_notes(tpl, path)
        variables = self._plugin_vars(ctx, name, path, loader) if loader is not None else {}
        variables.update(ctx.kwargs)
        file = _File(name, path, index, variables, json=as_json)
        ctx.stack.append((name, path))
        try:
            out: list[str] = []
            self._walk(ctx, file, tpl.json_body if as_json and tpl.json_body is not None else tpl.nodes, out)
        finally:
            ctx.stack.pop()
        return "".join(out)

    def _plan(self, ctx: _Ctx, name: str, index: int, via: str) -> _Plan:
        """Worked out on each render; kept while the folders are settled and the file is older than a
        timestamp tick (the owner's watch then tells of any change) — names with a sub-path are not kept."""
        d = self.dirs[index]
        path = d.path / name
        tpl = self._load(path)
        py = py_name(name)
        found = next((i for i in (index, *range(len(self.dirs))) if self._folders.has(ctx.listings, i, py)), None)
        loader = None
        if found is not None:
            py_path = self.dirs[found].path / py
            loader = (py_path, Source(py, py_path, self.dirs[found].label, "variables", self._lower(ctx, py, found)))
        plan = (path, tpl, Source(name, path, d.label, via, self._lower(ctx, name, index)), loader)  # type: ignore[arg-type]
        stamp = self._files.get(path)
        if stamp is not None and stamp[0] is not None and "/" not in name and "\\" not in name \
                and self._folders.settled():
            self._plans[(name, index, via)] = plan
        return plan

    def _cycle(self, ctx: _Ctx, name: str, path: Path) -> None:
        chain = [*ctx.stack, (name, path)]
        start = next(i for i, (_, p) in enumerate(chain) if p == path)
        chain = chain[start:]
        names = " → ".join(n for n, _ in chain)
        paths = "\n".join(f"  {n}: {p}" for n, p in chain)
        raise PromptError(f"include cycle: {names}\n{paths}\nfix: remove one of these includes")

    def _load(self, path: Path) -> Template:
        st = os.stat(path)
        key = (st.st_mtime_ns, st.st_size)
        hit = self._files.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        started = time.time_ns()
        tpl = load_template(path.read_bytes(), str(path))
        self._files[path] = (key if started - key[0] > RACY_NS else None, tpl)
        return tpl

    def _report_notes(self, tpl: Template, where: object) -> None:
        for message, line in tpl.notes:
            self.diagnostics.add("warning", "prompt", message, where, line)

    def _walk(self, ctx: _Ctx, file: _File, nodes: tuple[Node, ...], out: list[str]) -> None:
        for node in nodes:
            kind = type(node)
            if kind is Text:
                out.append(node.text)  # type: ignore[union-attr]
            elif kind is Var:
                out.append(self._value(ctx, file, node))  # type: ignore[arg-type]
            elif kind is If:
                self._conditional(ctx, file, node, out)  # type: ignore[arg-type]
            elif kind is Include:
                out.append(self._include(ctx, file, node))  # type: ignore[arg-type]
            else:
                file.halted = True
                self.diagnostics.add("warning", "prompt", "unterminated {{if}}: it and the rest of the file are "
                                     "left as written", file.where, node.line, "add the missing {{endif}}")  # type: ignore[union-attr]

    def _conditional(self, ctx: _Ctx, file: _File, node: If, out: list[str]) -> None:
        if not file.halted:
            try:
                if node.code is None:
                    raise EvalError(node.error)
                keep = truth(node.code, file.vars)
            except EvalError as exc:
                file.halted = True
                self.diagnostics.add(
                    "warning", "prompt", f"cannot evaluate {{{{if {node.expr}}}}}: {exc}; this block and the rest "
                    "of the file are left as written", file.where, node.line,
                    "pass every name the condition uses (None or '' for 'absent')")
            else:
                if keep:
                    self._walk(ctx, file, node.body, out)
                return
        out.append(node.open)
        self._walk(ctx, file, node.body, out)
        out.append(node.close)

    def _value(self, ctx: _Ctx, file: _File, node: Var) -> str:
        try:
            value = file.vars[node.name]
        except KeyError:
            if file.json:
                raise PromptError(f"{file.where}:{node.line}: variable {node.name!r} is missing for the JSON "
                                  f"template; pass {node.name}=...") from None
            ctx.unknown.setdefault(node.name)
            self.diagnostics.add("info", "prompt", f"no variable named {node.name!r}; {node.raw} left as written",
                                 file.where, node.line)
            return node.raw
        if not file.json:
            return as_text(value)
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            raise PromptError(f"{file.where}:{node.line}: variable {node.name!r} cannot be JSON-encoded: {exc}") from exc

    def _include(self, ctx: _Ctx, file: _File, node: Include) -> str:
        if node.target is None:
            return self._original(ctx, file, node)
        target = node.target
        if "{{" in target:  # a placeholder inside the file name selects the file
            target = VAR.sub(lambda m: as_text(file.vars[m[1]]) if m[1] in file.vars else m[0], target)
        if not valid_name(target):
            return self._keep(file, node, f"include of {target!r} refused: only names relative to the prompt "
                              "folders can be included")
        index = self._locate(ctx, target, 0)
        if index is None:
            return self._keep(file, node, f"included file {target!r} not found in any prompt folder")
        try:
            return self._render_file(ctx, target, index, "include")
        except OSError as exc:
            return self._keep(file, node, f"cannot read included file {target!r}: {exc}")

    def _original(self, ctx: _Ctx, file: _File, node: Include) -> str:
        if file.path is None:
            return self._keep(file, node, "{{include original}} needs a file name; render_text has none")
        index = self._locate(ctx, file.name, file.index + 1)
        if index is None:
            return ""  # nothing lower to extend
        try:
            return self._render_file(ctx, file.name, index, "original")
        except OSError as exc:
            return self._keep(file, node, f"cannot read the original of {file.name!r}: {exc}")

    def _keep(self, file: _File, node: Include, message: str) -> str:
        self.diagnostics.add("warning", "prompt", f"{message}; {node.raw} left as written", file.where, node.line)
        return node.raw

    # -- variables loaders --

    def _plugin_vars(self, ctx: _Ctx, name: str, md_path: Path, loader: tuple[Path, Source]) -> dict[str, Any]:
        path, source = loader
        ctx.sources.setdefault((path, "variables"), source)
        got = self._loaders.variables(path, md_path, list(self._dir_names), ctx.agent, ctx.kwargs, name)
        if not self._loaders.files_only(path):  # (else invalidate() ends the render's reuse)
            ctx.loaded.append((path, md_path, name, dict(got)))
        return got
