"""The provider protocol and its types: one role's model settings, the final reply, the stream sink,
and the errors a provider raises (transient, context window, broken stream)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Literal, Protocol, Sequence, runtime_checkable

from a0nb.errors import ModelError

Role = Literal["chat", "utility", "embedding"]


@dataclass
class ModelConfig:
    """One role's model settings, after the config layers were applied."""

    spec: str
    role: Role = "chat"
    params: dict[str, Any] = field(default_factory=dict)   # temperature, max_tokens, ...
    api_base: str | None = None
    api_key_env: str | None = None
    ctx_length: int = 128_000
    history_share: float = 0.7
    retries: int = 2
    backoff: float = 1.5
    vision: bool = False
    tools: list[dict[str, Any]] | None = None   # native tool schemas (OpenAI shape), sent when set

    def copy(self) -> ModelConfig:
        """The same settings with `params` of its own (what an extension may edit), made without running
        `__init__` again (a model call makes one per call)."""
        new = object.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new.params = self.params.copy()
        return new


@dataclass
class ModelReply:
    content: str
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    latency: float = 0.0
    model: str = ""
    chunks: int = 0
    stopped_early: bool = False
    extensions: list[str] = field(default_factory=list)   # the provider extensions that took part
    metadata: dict[str, Any] = field(default_factory=dict)   # the final core message's (Crystal Lattice providers)


class TransientModelError(ModelError):
    """Worth retrying (rate limit, timeout, server error) — only before the first chunk arrived."""


class ContextWindowExceeded(ModelError):
    """The request did not fit the model's window; the loop compacts once and retries."""


class StreamBroken(ModelError):
    """The stream failed after chunks arrived; nothing is retried (the partial reply is kept)."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


@runtime_checkable
class Provider(Protocol):
    """What every provider implements. `state` is one dict per request, shared with provider extensions.
    Optional: `tags(config) -> set[str]` (capabilities that gate extensions: `reasoning`, `tools`, `usage`;
    without it `has_reasoning_channel` stands for the `reasoning` tag), `completed(reply, state)` (the
    reply is final, after extensions and early stop) and, on the class, `chunks(messages, state) -> list | None`
    (the native chunks `stream` would yield, all at once, when the provider has them before the stream starts;
    None: `stream` serves this request) with, optionally, `take(chunks, state, closer) -> (taken, reasoning deltas,
    response deltas)`: `process_chunk` over at least one of the chunks in turn, in one call, up to and including the
    first whose response delta holds `closer` ('': all of them); the deltas are the non-empty ones."""

    name: str

    def init(self, config: ModelConfig) -> dict[str, Any]: ...
    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]: ...
    def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[Any]: ...
    def process_chunk(self, chunk: Any, state: dict[str, Any]) -> tuple[str, str]: ...   # (reasoning delta, content delta)
    def finalize(self, state: dict[str, Any]) -> ModelReply: ...


class StreamSink(Protocol):
    async def reasoning(self, delta: str, full: str) -> None: ...
    async def response(self, delta: str, full: str) -> str | None:
        """Return a snapshot to stop the stream early (the canonical reply), or None to go on."""


class RunSink(StreamSink, Protocol):
    """A sink that may be handed a reply's deltas as one run while no one wants them one by one: the driver then
    folds the chunks a provider has at hand (`chunks`) without a call per delta, and tells the sink at the end."""

    def quiet_run(self) -> str | None:
        """None: each delta goes to `reasoning` / `response`. Else the text a response delta must hold for the
        reply to end there: only at such a delta is `stop_at` asked."""

    def stop_at(self, full: str) -> str | None:
        """As `response` returns: the snapshot that ends the reply (`full`: the reply so far), or None."""

    def run_over(self, reasoning: int, response: int, full: str) -> None:
        """The run is over (or broke off): it held that many reasoning and response deltas, `full` the reply so
        far (before a snapshot replaced it)."""


_TAIL = 8  # items common_prefix compares one by one at the end


def new_partial() -> dict[str, Any]:
    return {"content": [], "reasoning": [], "tool_calls": {}, "usage": {}, "chunks": 0}


def common_prefix(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items are unchanged: the same objects or equal ones (a request's messages or contents
    against the last request's; history items against the last step's), found by comparisons that run in C.
    A step usually changes at most the last of the old items (the one the extras rode on): one comparison up
    to it, then it alone; else one comparison up to a little before the end, then item by item; a difference
    earlier is found by halves."""
    limit = min(len(old), len(new))
    if old.__class__ is not list or new.__class__ is not list:  # (a list never equals a tuple)
        old, new = list(old), list(new)
    last = limit - 1
    if last >= 0 and old[:last] == new[:last]:  # (list equality checks identity first, in C)
        return limit if old[last] is new[last] or old[last] == new[last] else last
    near = limit - _TAIL
    if near <= 0 or old[:near] == new[:near]:
        i = max(near, 0)
        while i < limit and (old[i] is new[i] or old[i] == new[i]):
            i += 1
        return i
    lo, hi = 0, near - 1  # the first differing item, by halves: each comparison runs in C
    while lo < hi:
        mid = (lo + hi) // 2
        if old[lo:mid + 1] == new[lo:mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo
