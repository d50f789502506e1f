"""The peers' half of the benchmarks, run with the peer venv's python (never imports a0nb): jupyter-ai v3
magics load and first call, its per-call overhead over litellm, smolagents' per-step cost at N messages.

`python peer_side.py once NAME` runs one fresh-process figure; `python peer_side.py serve` is a worker."""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import emit, serve

MODEL = "openai/gpt-4o-mini"


def _patch_litellm_mock(reply: str = "hi") -> Any:
    """jupyter-ai calls litellm.completion(model, messages, stream=False): add mock_response, keep the rest."""
    import litellm
    litellm.suppress_debug_info = True
    orig = litellm.completion

    def patched(*a: Any, **kw: Any) -> Any:
        kw.setdefault("mock_response", reply)
        return orig(*a, **kw)

    litellm.completion = patched
    return orig


# -- fresh processes -------------------------------------------------------------------------------

def once_jai_first() -> dict[str, float]:
    """A fresh shell, `%load_ext jupyter_ai_magic_commands`, then the first `%%ai` cell (mock reply)."""
    t0 = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    t1 = time.perf_counter()
    shell.run_line_magic("load_ext", "jupyter_ai_magic_commands")
    t2 = time.perf_counter()
    _patch_litellm_mock()
    result = shell.run_cell(f"%%ai {MODEL}\nhello")
    t3 = time.perf_counter()
    if result.error_in_exec is not None or getattr(result.result, "data", None) != "hi":
        raise SystemExit(f"jupyter-ai first call failed: {result.error_in_exec!r} {result.result!r}")
    return {"import_ipython_and_shell": t1 - t0, "load_ext": t2 - t1, "first_call": t3 - t2, "load_and_first": t3 - t1}


def once_shell() -> dict[str, float]:
    """A bare shell: the floor of the whole-process `%load_ext` figure."""
    t0 = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell
    InteractiveShell.instance()
    return {"import_ipython_and_shell": time.perf_counter() - t0, "load_ext": 0.0}


ONCE = {"jai_first": once_jai_first, "shell": once_shell}


# -- worker: smolagents ----------------------------------------------------------------------------

def _noop_tool() -> Any:
    from smolagents import tool

    @tool
    def noop(i: int) -> str:
        """Do nothing and say so.

        Args:
            i: a step number
        """
        return "ok"

    return noop


def _prefill(agent: Any, n: int) -> None:
    """N history messages, the same shape as benchmarks/bench_loop.py gives a0nb: N/2 (call, result) pairs."""
    from smolagents.memory import ActionStep, ToolCall
    from smolagents.monitoring import Timing
    for i in range(n // 2):
        agent.memory.steps.append(ActionStep(
            step_number=i + 1, timing=Timing(start_time=0.0, end_time=0.0),
            tool_calls=[ToolCall(name="noop", arguments={"i": i}, id=f"old_{i}")],
            observations=f"question {i} " + "words " * 20))


def smol_steps(n: int, steps: int = 20, prepare: bool = False) -> float:
    """Median gap in CPU time (process_time) between fake-model calls (ms) over a run of `steps` tool steps after N history messages:
    the framework's whole cost for one step, because the model and the tool are instant."""
    from smolagents import LogLevel, Model, ToolCallingAgent
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
    )

    class Scripted(Model):
        def __init__(self) -> None:
            super().__init__(model_id=MODEL)
            self.i, self.stamps = 0, []

        def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                     tools_to_call_from: Any = None, **kw: Any) -> Any:
            self.stamps.append(time.process_time())  # CPU time, as bench_loop measures a0nb
            self.i += 1
            if prepare:  # what LiteLLMModel.generate does before the network
                self._prepare_completion_kwargs(messages=messages, stop_sequences=stop_sequences,
                                                tools_to_call_from=tools_to_call_from, model=self.model_id,
                                                convert_images_to_image_urls=True)
            name, args = ("noop", {"i": self.i}) if self.i < steps else ("final_answer", {"answer": "done"})
            call = ChatMessageToolCall(id=f"call_{self.i}", type="function",
                                       function=ChatMessageToolCallFunction(name=name, arguments=args))
            return ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[call])

    model = Scripted()
    agent = ToolCallingAgent(tools=[_noop_tool()], model=model, max_steps=steps + 5, verbosity_level=LogLevel.OFF)
    _prefill(agent, n)
    out = agent.run("go", reset=False)
    if out != "done" or model.i != steps:
        raise RuntimeError(f"smolagents run ended with {out!r} after {model.i} calls")
    gaps = [b - a for a, b in zip(model.stamps, model.stamps[1:])]
    return statistics.median(gaps) * 1000


# -- worker: jupyter-ai per call -------------------------------------------------------------------

class _Jai:
    def __init__(self) -> None:
        from IPython.core.interactiveshell import InteractiveShell
        self.shell = InteractiveShell.instance()
        self.shell.run_line_magic("load_ext", "jupyter_ai_magic_commands")
        self.direct = _patch_litellm_mock()
        self.messages = [{"role": "user", "content": "hello"}]

    def call_direct(self) -> None:
        r = self.direct(model=MODEL, messages=self.messages, mock_response="hi")
        assert r.choices[0].message.content == "hi"

    def call_magic(self) -> None:
        assert self.shell.run_cell_magic("ai", MODEL, "hello").data == "hi"


_JAI: list[_Jai] = []  # one per worker process, made on first use (its load takes seconds)


def jai_percall(blocks: int = 15, calls: int = 10) -> dict[str, list[float]]:
    """Per call (ms), mean of `calls` back-to-back calls per block (litellm leaves a logging job running after
    each call, so single calls mostly measure the previous call's tail), blocks interleaved direct / magic."""
    if not _JAI:
        _JAI.append(_Jai())
    jai = _JAI[0]
    for _ in range(calls):  # litellm's first calls warm its own caches
        jai.call_direct()
        jai.call_magic()
    out: dict[str, list[float]] = {"direct": [], "magic": []}
    for b in range(blocks):
        order = ("direct", "magic") if b % 2 == 0 else ("magic", "direct")
        for name in order:
            fn = jai.call_direct if name == "direct" else jai.call_magic
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            out[name].append((time.perf_counter() - t) / calls * 1000)
    return out


def main(argv: list[str]) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if argv[:1] == ["serve"]:
        serve({"smol_steps": smol_steps, "jai_percall": jai_percall})
        return
    if argv[:1] == ["once"] and len(argv) >= 2:
        result = ONCE[argv[1]](**(json.loads(argv[2]) if len(argv) > 2 else {}))
        emit(result)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # litellm's interpreter exit costs ~1 s and is no part of any figure
    raise SystemExit("usage: peer_side.py serve | once NAME [JSON]")


if __name__ == "__main__":
    main(sys.argv[1:])
