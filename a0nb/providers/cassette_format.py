"""Cassette format: the recordable request (secrets masked, transport knobs dropped), its fingerprint
over the normalised request, and YAML/JSONL cassette files read, appended and written atomically."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping

import yaml

from a0nb.atomic_io import storage_error, write_text
from a0nb import safe_yaml
from a0nb.errors import ConfigError
from a0nb.files.credentials import credential_values
from a0nb.files.secrets import Secrets
from a0nb.resources import bundled_root

__all__ = ["Masker", "append_entry", "build_request", "check_suffix", "fingerprint", "load_cassette",
           "normalise_request", "plain", "save_cassette", "VOLATILE", "VOLATILE_EXTRAS"]

DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
# transport, retry and test knobs: they change nothing the model sees
VOLATILE = {"stream", "stream_options", "mock_response", "mock_tool_calls", "api_key", "api_base", "base_url",
            "max_retries", "num_retries", "timeout", "client", "metadata", "tools"}
SUFFIXES = (".yaml", ".yml", ".jsonl")


class Masker:
    """Replaces secret values before anything is written: the agent's secrets and every credential in the
    environment go through a0nb's one masking function (`Secrets`); then the notebook folder and the model
    spec become placeholders, so a cassette replays in any clone."""

    def __init__(self, needles: Mapping[str, str], secrets: Secrets | None = None) -> None:
        self.needles = dict(needles)
        self.secrets = secrets or Secrets()
        ordered = sorted(self.needles, key=len, reverse=True)  # longest first: a key containing another
        self.pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @classmethod
    def from_params(cls, params: Mapping[str, Any], environ: Mapping[str, str] | None = None,
                    spec: str = "", workdir: Path | None = None) -> Masker:
        needles: dict[str, str] = {}
        if workdir is not None:
            # where the notebook (and a0nb) happen to live is no part of the request: a cassette replays
            # in any clone
            needles[str(Path(workdir).resolve())] = "<workdir>"
            needles.setdefault(str(bundled_root().resolve()), "<a0nb>")
        if spec:
            # the agent may quote its own model spec in the prompt; `record:c.yaml:x` and `replay:c.yaml`
            # must not make the requests differ
            needles[spec] = "<model>"
        credentials = credential_values(environ) + [(str(k), str(v)) for k, v in params.get("_credentials") or ()]
        secrets = params.get("_secret_values") or ()
        if isinstance(secrets, Mapping):
            named = {str(name): str(value) for name, value in secrets.items()}
        else:  # plain values, as the agent passes them: no name to show
            named, credentials = {}, credentials + [("secret", str(value)) for value in secrets]
        return cls(needles, Secrets(named, credentials=credentials))

    def text(self, value: str) -> str:
        value = self.secrets.mask_text(value)
        if self.pattern is None or not value:
            return value
        return self.pattern.sub(lambda m: self.needles[m.group(0)], value)

    def mask(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.mask(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.mask(v) for v in value]
        return value


def plain(value: Any) -> Any:
    """JSON-shaped copy (tuples become lists, odd objects become strings) so YAML and JSONL agree."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def build_request(role: str, model: str, messages: list[dict[str, Any]], params: Mapping[str, Any],
                  tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The recordable request: never the key, never a0nb's private `_` params, never transport knobs.
    `tools`: the native tool schemas the request carried (set by the native-tool-calls extension)."""
    kept = {k: v for k, v in params.items() if k not in VOLATILE and not k.startswith("_")}
    return plain({"role": role, "model": model, "messages": messages, "tools": tools or params.get("tools"),
                   "params": kept})


# Extras whose values describe the moment, not the conversation: the clock, and the notebook folder's file
# tree (which changes as soon as the notebook writes a file — the cassette itself included).
VOLATILE_EXTRAS = ("current_datetime", "project_file_structure")
_EXTRAS_MARK = "[EXTRAS]\n"


def _without_volatile_extras(text: str) -> str:
    head, mark, tail = text.rpartition(_EXTRAS_MARK)
    if not mark:
        return text
    try:
        extras = json.loads(tail)
    except ValueError:
        return text
    if not isinstance(extras, dict):
        return text
    kept = {k: v for k, v in extras.items() if k not in VOLATILE_EXTRAS}
    return head + mark + json.dumps(kept, ensure_ascii=False)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return DATETIME.sub("<datetime>", _without_volatile_extras(value))
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def normalise_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """What the fingerprint covers: role, messages, tools and params, with the injected clock blanked.
    The model id is left out so `replay:` matches calls recorded with any model."""
    params = {k: v for k, v in (request.get("params") or {}).items() if k not in VOLATILE and not k.startswith("_")}
    return _scrub(plain({"role": request.get("role", "chat"), "messages": request.get("messages") or [],
                          "tools": request.get("tools"), "params": params}))


def fingerprint(request: Mapping[str, Any]) -> str:
    canonical = json.dumps(normalise_request(request), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- files


def check_suffix(path: Path) -> None:
    """ConfigError unless `path` names a .yaml, .yml or .jsonl file."""
    if path.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"cassette {path}: use a .yaml, .yml or .jsonl file name")


def load_cassette(path: Path) -> list[dict[str, Any]]:
    check_suffix(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"cassette {path} is not UTF-8 text (invalid byte 0x{exc.object[exc.start]:02x} on line "
                          f"{line}); a0nb writes cassettes as UTF-8 — re-record it, or restore it from version "
                          "control") from None
    try:
        if path.suffix.lower() == ".jsonl":
            data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = safe_yaml.load(text) or []
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"cassette {path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(e, dict) and "response" in e for e in data):
        raise ConfigError(f"cassette {path} must hold a list of entries with `fingerprint`, `request` and `response`")
    return data


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings as literal blocks, so prompts in a cassette read like the prompt files
    (libyaml's emitter when PyYAML has it: ~10x faster than the pure-Python one)."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def _dump(path: Path, entries: list[dict[str, Any]]) -> str:
    if path.suffix.lower() == ".jsonl":
        return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    return yaml.dump(entries, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def save_cassette(path: Path, entries: list[dict[str, Any]]) -> None:
    """Write atomically (temp file + rename): an interrupted kernel never leaves half a cassette."""
    check_suffix(path)
    _write(path, _dump(path, entries))


# process-wide like the files it guards (one lock for all cassettes: appends are short)
_APPENDING = threading.Lock()
_BLOCK_LIST = re.compile(r"(?:\s*#[^\n]*\n|\s*\n)*- ")


def append_entry(path: Path, entry: dict[str, Any]) -> None:
    """Add one recorded call without re-reading and re-writing every earlier entry as YAML: a block-style
    list (what we write) or JSONL takes the new entry's text at its end. Anything else (a hand-edited
    flow-style list) is loaded and saved whole. Still atomic: the file is replaced, never half-written; and
    locked (filelock), so two writers never lose each other's entries."""
    check_suffix(path)
    # read, add, replace: threads of one batch (Agent.map), other agents and other kernels each add their entries
    with _APPENDING, _locked(path):
        _append(path, entry)


def _append(path: Path, entry: dict[str, Any]) -> None:
    try:
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
    except OSError as exc:
        raise storage_error(path, exc, "cassette") from exc
    if not old.strip() or old.strip() == "[]":
        _write(path, _dump(path, [entry]))
    elif path.suffix.lower() == ".jsonl" or _BLOCK_LIST.match(old):
        _write(path, old + ("" if old.endswith("\n") else "\n") + _dump(path, [entry]))
    else:
        save_cassette(path, load_cassette(path) + [entry])


def _locked(path: Path) -> Any:
    """An inter-process lock for one cassette, kept in the temp folder (nothing appears next to the cassette)."""
    from filelock import FileLock
    folder = Path(tempfile.gettempdir()) / "a0nb-locks"
    folder.mkdir(exist_ok=True)
    key = hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:20]
    return FileLock(str(folder / f"{key}.lock"), timeout=60)


def _write(path: Path, text: str) -> None:
    write_text(path, text, "cassette")
