"""`%a0 record`, `replay`, `live`: switch the chat model to a cassette and back to the real model."""
from __future__ import annotations

from pathlib import Path

from IPython.core.error import UsageError

from a0nb.notebook.commands import SUBCOMMANDS, Host


def record(host: Host, rest: str) -> None:
    cassette = _cassette_arg(host, "record", rest, must_exist=False)
    live = _current_live(host)
    if not live:
        from a0nb.providers.registry import no_model_message
        raise UsageError("%a0 record wraps the current model, but " + no_model_message())
    host.options.model = f"record:{cassette}:{live}"
    host.live_spec = live
    host.out.note(f"a0: recording {live} into {cassette}")


def replay(host: Host, rest: str) -> None:
    cassette = _cassette_arg(host, "replay", rest, must_exist=True)
    host.live_spec = _current_live(host) or host.live_spec
    host.options.model = f"replay:{cassette}"
    host.out.note(f"a0: replaying {cassette}")


def live(host: Host, rest: str) -> None:
    spec = _current_live(host)
    host.options.model = spec or None
    host.live_spec = None
    host.out.note(f"a0: live model {spec or '(none configured)'}")


def _current_live(host: Host) -> str:
    spec = host.agent.model_spec("chat")
    if spec.startswith("record:"):
        return spec.split(":", 2)[2] if spec.count(":") >= 2 else ""
    if spec.startswith("replay:"):
        return host.live_spec or ""
    return spec


def _cassette_arg(host: Host, sub: str, rest: str, must_exist: bool) -> str:
    if not rest or len(rest.split()) != 1:
        raise UsageError(SUBCOMMANDS[sub].usage)
    path = Path(rest).expanduser()
    full = path if path.is_absolute() else host.agent.workdir / path
    if must_exist and not full.is_file():
        raise UsageError(f"%a0 {sub}: cassette {rest} not found (looked for {full})")
    if not must_exist and not full.parent.is_dir():
        raise UsageError(f"%a0 {sub}: folder {full.parent} does not exist")
    return rest
