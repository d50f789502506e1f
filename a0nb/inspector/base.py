"""The `Rendering` every inspector view returns (static text/plain + no-JS text/html, volatile values in
metadata under `a0`), and `PathStyle`, which shows paths relative to the notebook folder so renderings are stable."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

METADATA_KEY = "a0"


class Rendering(tuple):  # type: ignore[type-arg]
    """A displayable view: deterministic `text` and `html`; everything volatile lives in `meta`.

    It *is* the `(data, metadata)` pair IPython expects from `_repr_mimebundle_`, so an object's
    `_repr_mimebundle_` may simply return a rendering."""

    def __new__(cls, text: str, html: str, meta: dict[str, Any] | None = None) -> "Rendering":
        return super().__new__(cls, ({"text/plain": text, "text/html": html}, {METADATA_KEY: dict(meta or {})}))

    def __getnewargs__(self) -> tuple[str, str, dict[str, Any]]:  # copy and pickle
        return self.text, self.html, self.meta

    @property
    def text(self) -> str:
        return self[0]["text/plain"]

    @property
    def html(self) -> str:
        return self[0]["text/html"]

    @property
    def meta(self) -> dict[str, Any]:
        return self[1][METADATA_KEY]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, str], dict[str, Any]]:
        data = dict(self[0])
        if include:
            data = {k: v for k, v in data.items() if k in include}
        if exclude:
            data = {k: v for k, v in data.items() if k not in exclude}
        return data, {METADATA_KEY: dict(self.meta)}

    def bundle(self) -> tuple[dict[str, str], dict[str, Any]]:
        return self._repr_mimebundle_()

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


_TAIL = r"(?=[/\\\s`'\")\]:,;>]|$)"


@dataclass(frozen=True)
class PathStyle:
    """Rewrites known absolute folders to short stable names: `.` (notebook), `<a0nb>`, `$A0NB_HOME`."""

    replacements: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, folder: str | Path | None = None, home: str | Path | None = None,
           bundled: str | Path | None = None) -> "PathStyle":
        from a0nb.resources import bundled_root, user_home
        pairs = [(Path(folder) if folder is not None else Path.cwd(), "."),
                 (Path(home) if home is not None else user_home(), "$A0NB_HOME"),
                 (Path(bundled) if bundled is not None else bundled_root(), "<a0nb>")]
        return cls(_expand(pairs))

    @classmethod
    def for_agent(cls, agent: Any) -> "PathStyle":
        h = agent.hierarchy
        return cls.of(h.workdir, h.home, h.bundled)

    def __call__(self, value: object) -> str:
        text = str(value)
        for path, name in self.replacements:
            if path in text:
                text = re.sub(re.escape(path) + _TAIL, _literal(name), text)
        return text

    def many(self, values: Iterable[object]) -> list[str]:
        return [self(v) for v in values]


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement that is `text` as written (no backslash or group escapes)."""
    return lambda _m: text


def _expand(pairs: list[tuple[Path, str]]) -> tuple[tuple[str, str], ...]:
    """Both the given and the resolved spelling of each folder; longest first so nested folders win."""
    out: dict[str, str] = {}
    for path, name in pairs:
        for spelling in {str(path), os.path.realpath(path)}:
            if len(spelling) > 1:
                out.setdefault(spelling.rstrip("/\\"), name)
    return tuple(sorted(out.items(), key=lambda kv: -len(kv[0])))


def style_for(agent: Any = None, folder: str | Path | None = None) -> PathStyle:
    if agent is not None:
        return PathStyle.for_agent(agent)
    return PathStyle.of(folder)
