"""Record/replay of model calls: cassettes (YAML or JSONL next to the notebook) keyed by a fingerprint of
the normalised request; a strict-replay miss explains itself with a diff against the nearest recorded call."""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Mapping, cast
from urllib.parse import parse_qs

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ModelConfig, ModelReply, Provider, new_partial
from a0nb.providers.cassette_format import (Masker, append_entry, build_request, check_suffix, fingerprint,
                                            load_cassette, normalise_request, plain, save_cassette)
from a0nb.providers.extension import provider_tags

__all__ = ["Masker", "RecordingProvider", "ReplayProvider", "append_entry", "cassette_provider", "fingerprint",
           "load_cassette", "normalise_request", "save_cassette"]

Mode = Literal["strict", "lax"]
CHUNK = 32
DIFF_LINES = 120


# ---------------------------------------------------------------- replay


class ReplayProvider:
    """Serves recorded replies: by fingerprint (strict) or in recorded order (lax), streamed in chunks."""

    name = "replay"
    # replies were recorded as the agent saw them (think tags already split off, tool calls folded); `tools`
    # lets the native-tool-calls extension put the same schemas into the request as when it was recorded
    TAGS = frozenset({"reasoning", "tools", "replayed"})  # (replayed: the recorded reply was split when recorded)

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
        recorded = render(entry.get("request") or {})
        scored.append((difflib.SequenceMatcher(None, recorded, new, autojunk=False).ratio(), -i, recorded))
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
        check_suffix(path)
        self.path, self.inner, self.inner_spec, self.spec = path, inner, inner_spec, spec
        self.workdir = workdir
        self.name = f"record:{inner.name}"

    def tags(self, config: ModelConfig) -> frozenset[str]:
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
        response = masker.mask(plain({"content": reply.content, "reasoning": reply.reasoning, "tool_calls": reply.tool_calls,
                                       "usage": reply.usage, "cost": reply.cost, "model": reply.model}))
        # appended to what is on disk now: another agent may have recorded into the same cassette
        append_entry(self.path, {"fingerprint": fingerprint(request), "request": request, "response": response})


# ---------------------------------------------------------------- spec


def cassette_provider(spec: str, workdir: Path, make_inner: Callable[[str], Provider]) -> Provider:
    """`replay:<cassette>[?mode=lax]` or `record:<cassette>:<inner spec>` (the inner spec may hold colons)."""
    prefix, _, rest = spec.partition(":")
    if prefix == "replay":
        target, _, query = rest.partition("?")
        modes = parse_qs(query).get("mode")
        mode = modes[-1] if modes else None
        if mode is not None and mode not in ("strict", "lax"):
            raise ConfigError(f"{spec}: mode must be strict or lax (replay:{target}?mode=lax)")
        if not target.strip():
            raise ConfigError("replay needs a cassette file: model='replay:cassette.yaml'")
        return ReplayProvider(_resolve(workdir, target), cast("Mode | None", mode), spec, workdir)
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
    check_suffix(path)
    return path
