"""Record/replay of model calls: cassettes (YAML or JSONL next to the notebook) keyed by a fingerprint of
the normalised request; a strict-replay miss explains itself with a diff against the nearest recorded call."""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Mapping
from urllib.parse import parse_qs

import yaml

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ModelConfig, ModelReply, Provider, new_partial

__all__ = ["Masker", "RecordingProvider", "ReplayProvider", "append_entry", "cassette_provider", "fingerprint",
           "load_cassette", "normalise_request", "save_cassette"]

Mode = Literal["strict", "lax"]
CHUNK = 32
DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
# transport, retry and test knobs: they change nothing the model sees
VOLATILE = {"stream", "stream_options", "mock_response", "mock_tool_calls", "api_key", "api_base", "base_url",
            "max_retries", "num_retries", "timeout", "client", "metadata", "tools"}
ENV_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
SUFFIXES = (".yaml", ".yml", ".jsonl")
DIFF_LINES = 120
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# ---------------------------------------------------------------- masking and fingerprints


class Masker:
    """Replaces secret values (the agent's, and API-key-like environment variables) before anything is written."""

    def __init__(self, needles: Mapping[str, str]) -> None:
        self.needles = dict(needles)
        ordered = sorted(self.needles, key=len, reverse=True)  # longest first: a key containing another
        self.pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @classmethod
    def from_params(cls, params: Mapping[str, Any], environ: Mapping[str, str] | None = None,
                    spec: str = "", workdir: Path | None = None) -> Masker:
        needles: dict[str, str] = {}
        if workdir is not None:
            # where the notebook (and a0nb) happen to live is no part of the request: a cassette replays
            # in any clone
            from a0nb.resources import bundled_root
            needles[str(Path(workdir).resolve())] = "<workdir>"
            needles.setdefault(str(bundled_root().resolve()), "<a0nb>")
        if spec:
            # the agent may quote its own model spec in the prompt; `record:c.yaml:x` and `replay:c.yaml`
            # must not make the requests differ
            needles[spec] = "<model>"
        for name, value in (environ if environ is not None else os.environ).items():
            if name.upper().endswith(ENV_SECRET_SUFFIXES) and len(value) >= 8:
                _add(needles, value, f"<redacted:{name}>")
        secrets = params.get("_secret_values") or ()
        if isinstance(secrets, Mapping):
            for name, value in secrets.items():
                _add(needles, str(value), f"§§secret({str(name).upper()})")
        else:  # plain values, as the agent passes them: no name to show
            for value in secrets:
                _add(needles, str(value), "<redacted:secret>")
        return cls(needles)

    def text(self, value: str) -> str:
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


def _add(needles: dict[str, str], value: str, alias: str) -> None:
    if sum(not c.isspace() for c in value) < 4:  # shorter would mask ordinary words and numbers
        return
    for form in (value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]):
        needles.setdefault(form, alias)


def _plain(value: Any) -> Any:
    """JSON-shaped copy (tuples become lists, odd objects become strings) so YAML and JSONL agree."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def build_request(role: str, model: str, messages: list[dict[str, Any]], params: Mapping[str, Any],
                  tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The recordable request: never the key, never a0nb's private `_` params, never transport knobs.
    `tools`: the native tool schemas the request carried (set by the native-tool-calls extension)."""
    kept = {k: v for k, v in params.items() if k not in VOLATILE and not k.startswith("_")}
    return _plain({"role": role, "model": model, "messages": messages, "tools": tools or params.get("tools"),
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
    return _scrub(_plain({"role": request.get("role", "chat"), "messages": request.get("messages") or [],
                          "tools": request.get("tools"), "params": params}))


def fingerprint(request: Mapping[str, Any]) -> str:
    canonical = json.dumps(normalise_request(request), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- files


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"cassette {path}: use a .yaml, .yml or .jsonl file name")


def load_cassette(path: Path) -> list[dict[str, Any]]:
    _check_suffix(path)
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".jsonl":
            data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = yaml.load(text, Loader=_Loader) or []
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
    _check_suffix(path)
    _write(path, _dump(path, entries))


_BLOCK_LIST = re.compile(r"(?:\s*#[^\n]*\n|\s*\n)*- ")


def append_entry(path: Path, entry: dict[str, Any]) -> None:
    """Add one recorded call without re-reading and re-writing every earlier entry as YAML: a block-style
    list (what we write) or JSONL takes the new entry's text at its end. Anything else (a hand-edited
    flow-style list) is loaded and saved whole. Still atomic: the file is replaced, never half-written."""
    _check_suffix(path)
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    if not old.strip() or old.strip() == "[]":
        _write(path, _dump(path, [entry]))
    elif path.suffix.lower() == ".jsonl" or _BLOCK_LIST.match(old):
        _write(path, old + ("" if old.endswith("\n") else "\n") + _dump(path, [entry]))
    else:
        save_cassette(path, load_cassette(path) + [entry])


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- replay


class ReplayProvider:
    """Serves recorded replies: by fingerprint (strict) or in recorded order (lax), streamed in chunks."""

    name = "replay"
    # replies were recorded as the agent saw them (think tags already split off, tool calls folded); `tools`
    # lets the native-tool-calls extension put the same schemas into the request as when it was recorded
    TAGS = frozenset({"reasoning", "tools"})

    def __init__(self, path: Path, mode: Mode | None = None, spec: str = "", workdir: Path | None = None) -> None:
        if not path.is_file():
            raise ConfigError(f"cassette {path} not found; record one with model='record:{path.name}:<model spec>' "
                              "(for example record:cassette.yaml:openai/gpt-4o-mini)")
        self.path, self.mode, self.spec, self.workdir = path, mode, spec, workdir
        self.entries = load_cassette(path)
        self.index: dict[str, list[int]] = {}
        for i, entry in enumerate(self.entries):
            # recomputed, not trusted: a hand-edited request (or newer normalisation rules) still matches
            key = fingerprint(entry["request"]) if entry.get("request") else str(entry.get("fingerprint"))
            self.index.setdefault(key, []).append(i)
        self.used: set[int] = set()
        self.position = 0

    def tags(self, config: ModelConfig) -> frozenset[str]:
        return self.TAGS

    def init(self, config: ModelConfig) -> dict[str, Any]:
        mode = self.mode or config.params.get("_cassette_mode") or "strict"
        if mode not in ("strict", "lax"):
            raise ConfigError(f"cassette mode must be strict or lax, not {mode!r}")
        return {"config": config, "partial": new_partial(), "role": config.role, "params": dict(config.params),
                "mode": mode, "masker": Masker.from_params(config.params, spec=self.spec, workdir=self.workdir)}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        state["request"] = {"messages": messages}
        return messages, state

    def _choose(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
        """Matched when the stream starts, after the provider extensions decorated the request."""
        request = state["masker"].mask(build_request(state["role"], "", messages, state["params"],
                                                     state["request"].get("tools")))
        i = self._next_in_order() if state["mode"] == "lax" else self._match(request)
        self.used.add(i)
        state["model"] = str((self.entries[i].get("request") or {}).get("model") or f"replay:{self.path.name}")
        state["entry"] = self.entries[i]
        return self.entries[i]

    def _next_in_order(self) -> int:
        if self.position >= len(self.entries):
            raise ModelError(f"replay (lax): all {len(self.entries)} recorded calls in {self.path} were used; "
                             "record more with record:<cassette>:<model spec>, or call agent.reset()")
        self.position += 1
        return self.position - 1

    def _match(self, request: dict[str, Any]) -> int:
        hits = self.index.get(fingerprint(request))
        if hits:
            # the same request twice gets the recorded replies in order, then the last one again
            return next((i for i in hits if i not in self.used), hits[-1])
        raise ModelError(miss_message(self.path, self.entries, request))

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[tuple[str, str]]:
        response = self._choose(messages, state)["response"]
        reasoning, content = str(response.get("reasoning") or ""), str(response.get("content") or "")
        for i in range(0, len(reasoning), CHUNK):
            yield ("r", reasoning[i:i + CHUNK])
        for i in range(0, len(content), CHUNK):
            yield ("c", content[i:i + CHUNK])

    def process_chunk(self, chunk: tuple[str, str], state: dict[str, Any]) -> tuple[str, str]:
        partial = state["partial"]
        partial["chunks"] += 1
        kind, text = chunk
        if kind == "r":
            partial["reasoning"].append(text)
            return text, ""
        partial["content"].append(text)
        return "", text

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        partial, response = state["partial"], state["entry"]["response"]
        return ModelReply(content="".join(partial["content"]), reasoning="".join(partial["reasoning"]),
                          tool_calls=list(response.get("tool_calls") or []), usage=dict(response.get("usage") or {}),
                          cost=0.0, model=state["model"], chunks=partial["chunks"])


def render(request: Mapping[str, Any]) -> list[str]:
    """The normalised request as lines, message by message: what a miss diff is computed on."""
    norm = normalise_request(request)
    lines = [f"role: {norm['role']}", f"params: {json.dumps(norm['params'], sort_keys=True, ensure_ascii=False)}"]
    if norm["tools"]:
        lines.append(f"tools: {json.dumps(norm['tools'], sort_keys=True, ensure_ascii=False)}")
    for n, message in enumerate(norm["messages"], 1):
        lines.append(f"=== message {n} ({message.get('role', '?')})")
        content = message.get("content")
        if isinstance(content, list):  # multimodal parts
            content = "\n".join(p.get("text", json.dumps(p, sort_keys=True)) if isinstance(p, dict) else str(p)
                                for p in content)
        lines.extend(str(content or "").splitlines() or [""])
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        if extra:
            lines.append(f"[{json.dumps(extra, sort_keys=True, ensure_ascii=False)}]")
    return lines


def miss_message(path: Path, entries: list[dict[str, Any]], request: Mapping[str, Any]) -> str:
    head = (f"replay: no recorded call in {path.name} matches this request (strict mode, {len(entries)} recorded). "
            f"Re-record with record:{path.name}:<model spec>, or replay in order with replay:{path.name}?mode=lax.")
    if not entries:
        return head
    new = render(request)
    scored = []
    for i, entry in enumerate(entries):
        matcher = difflib.SequenceMatcher(None, render(entry.get("request") or {}), new, autojunk=False)
        scored.append((matcher.ratio(), -i, matcher.a))
    ratio, neg_i, old = max(scored)
    diff = list(difflib.unified_diff(old, new, f"recorded call #{1 - neg_i}", "this request", lineterm="", n=2))
    if len(diff) > DIFF_LINES:
        diff = diff[:DIFF_LINES] + [f"... ({len(diff) - DIFF_LINES} more diff lines)"]
    return f"{head}\nNearest is recorded call #{1 - neg_i} ({ratio:.0%} similar):\n" + "\n".join(diff)


# ---------------------------------------------------------------- record


class RecordingProvider:
    """Wraps any provider; each finished call is appended to the cassette (secrets masked, file rewritten
    atomically). Recording appends: delete the file to start a cassette afresh."""

    def __init__(self, path: Path, inner: Provider, inner_spec: str, spec: str = "",
                 workdir: Path | None = None) -> None:
        _check_suffix(path)
        self.path, self.inner, self.inner_spec, self.spec = path, inner, inner_spec, spec
        self.workdir = workdir
        self.name = f"record:{inner.name}"

    def tags(self, config: ModelConfig) -> frozenset[str]:
        from a0nb.providers.extension import provider_tags
        return provider_tags(self.inner, config)

    def init(self, config: ModelConfig) -> dict[str, Any]:
        state = self.inner.init(config)
        state["_cassette"] = {"role": config.role, "params": dict(config.params),
                              "masker": Masker.from_params(config.params, spec=self.spec, workdir=self.workdir)}
        return state

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        native, state = self.inner.initialize_request(messages, state)
        state["_cassette"]["messages"] = messages
        return native, state

    def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]:
        return self.inner.stream(messages, state)

    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]:
        return self.inner.process_chunk(chunk, state)

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        return self.inner.finalize(state)

    def completed(self, reply: ModelReply, state: dict[str, Any]) -> None:
        """The reply as the agent saw it (after provider extensions and early stop) goes into the cassette,
        so replay needs no splitting or folding of its own."""
        done = getattr(self.inner, "completed", None)
        if done is not None:
            done(reply, state)
        rec = state["_cassette"]
        masker: Masker = rec["masker"]
        tools = (state.get("request") or {}).get("tools")
        request = masker.mask(build_request(rec["role"], self.inner_spec, rec["messages"], rec["params"], tools))
        response = masker.mask(_plain({"content": reply.content, "reasoning": reply.reasoning, "tool_calls": reply.tool_calls,
                                       "usage": reply.usage, "cost": reply.cost, "model": reply.model}))
        # appended to what is on disk now: another agent may have recorded into the same cassette
        append_entry(self.path, {"fingerprint": fingerprint(request), "request": request, "response": response})


# ---------------------------------------------------------------- spec


def cassette_provider(spec: str, workdir: Path, make_inner: Callable[[str], Provider]) -> Provider:
    """`replay:<cassette>[?mode=lax]` or `record:<cassette>:<inner spec>` (the inner spec may hold colons)."""
    prefix, _, rest = spec.partition(":")
    if prefix == "replay":
        target, _, query = rest.partition("?")
        modes = parse_qs(query).get("mode") or [None]
        if modes[-1] not in (None, "strict", "lax"):
            raise ConfigError(f"{spec}: mode must be strict or lax (replay:{target}?mode=lax)")
        if not target.strip():
            raise ConfigError("replay needs a cassette file: model='replay:cassette.yaml'")
        return ReplayProvider(_resolve(workdir, target), modes[-1], spec, workdir)  # type: ignore[arg-type]
    cassette, sep, inner = rest.partition(":")
    if not sep or not cassette.strip() or not inner.strip():
        raise ConfigError(f"{spec!r}: write record:<cassette.yaml>:<model spec>, for example "
                          "record:cassette.yaml:openai/gpt-4o-mini")
    if inner.startswith(("record:", "replay:")):
        raise ConfigError(f"{spec!r}: the recorded model cannot itself be a cassette")
    return RecordingProvider(_resolve(workdir, cassette), make_inner(inner.strip()), inner.strip(), spec, workdir)


def _resolve(workdir: Path, name: str) -> Path:
    path = Path(name.strip()).expanduser()
    path = path if path.is_absolute() else Path(workdir) / path
    _check_suffix(path)
    return path
