"""`A0`, the traitlets configuration of the `%a0` magic: one trait per `Settings` field plus `profile`,
`format` and `chat`; `A0NB_*` environment variables are the defaults, `%config A0.x` / `c.A0.x` override."""
from __future__ import annotations

import os
import typing
from dataclasses import fields
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, default, observe
from traitlets.config import Configurable

from a0nb.settings import Settings, _coerce

FORMATS = ("markdown", "text", "html", "json", "code")


def _env(name: str) -> str | None:
    return os.environ.get("A0NB_" + name.upper()) or None


def _setting_trait(name: str, kind: Any) -> Any:
    args = typing.get_args(kind)
    help_ = f"agent setting `{name}` (default: env A0NB_{name.upper()}, then the lower layers)"
    literal = next((a for a in (kind, *args) if typing.get_origin(a) is typing.Literal), None)
    if literal is not None:
        return Enum(typing.get_args(literal), default_value=None, allow_none=True, config=True, help=help_)
    if any(typing.get_origin(a) is dict for a in (kind, *args)):
        return Dict(default_value=None, allow_none=True, config=True, help=help_)
    if any(typing.get_origin(a) is list for a in (kind, *args)):
        return List(default_value=None, allow_none=True, config=True, help=help_)
    base = next((a for a in (kind, *args) if a in (bool, int, float, str)), str)
    trait = {bool: Bool, int: Int, float: Float, str: Unicode}[base]
    return trait(default_value=None, allow_none=True, config=True, help=help_)


def _env_default(name: str) -> Any:
    def read(self: Configurable) -> Any:
        value = _env(name)
        if value is None:
            return None
        return _coerce(name, value)
    return default(name)(read)


def _build_config_class() -> type:
    """`A0`: one config trait per `Settings` field (so new settings appear here by themselves)."""
    hints = typing.get_type_hints(Settings)
    body: dict[str, Any] = {"__doc__": "Configuration of the %a0 magic: `%config A0.model = '...'`, `c.A0.*`."}
    names = [f.name for f in fields(Settings)]
    for name in names:
        body[name] = _setting_trait(name, hints[name])
        body[f"_default_{name}"] = _env_default(name)
    body["profile"] = Unicode("default", config=True, help="agent profile (env A0NB_PROFILE)")
    body["_default_profile"] = default("profile")(lambda self: _env("profile") or "default")
    body["format"] = Enum(FORMATS, "markdown", config=True, help="how %a0 ask shows the answer (env A0NB_FORMAT)")
    body["_default_format"] = default("format")(lambda self: _env("format") or "markdown")
    body["chat"] = Bool(False, config=True, help="chat mode: a plain cell is a message (env A0NB_CHAT)")
    body["_default_chat"] = default("chat")(lambda self: (_env("chat") or "0").lower() in ("1", "true", "on", "yes"))
    body["__init__"] = _config_init
    body["_remember"] = observe(*names)(_remember)
    return type("A0", (Configurable,), body)


def _config_init(self: Any, **kwargs: Any) -> None:
    self.explicit = {}  # settings set by %config / c.A0 / %a0 model: the `magic` layer of Settings
    Configurable.__init__(self, **kwargs)


def _remember(self: Any, change: Any) -> None:
    if change["new"] is None:
        self.explicit.pop(change["name"], None)
    else:
        self.explicit[change["name"]] = change["new"]


A0 = _build_config_class()


__all__ = ["A0", "FORMATS"]
