"""Judges one file of the Agent Zero upstream corpus as `../shared/a0-upstream/README.md` defines
"compatible": the file is placed where an Agent Zero user puts it, one turn runs with a scripted model,
and "ran" is observed from outside (a profiler records the file's functions called after its module body)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a0nb.errors import RepairableError
from call_watch import CallWatch  # tests/compat is on sys.path (test_upstream_corpus puts it there)
from a0nb.testing import answer, tool_reply

FINAL = "A0-COMPAT-FINAL-ANSWER"
PROBE = "a0_compat_probe"
# points Agent Zero fires from its application, not from an agent's turn: reached through `%load_ext a0nb`
# (start-up, banners), `%a0 ask` (the UI's message) and the end of a cell (the job loop's tick)
UI_POINTS = ("banners", "user_message_ui", "job_loop", "_functions/__main__/init_a0/start",
             "_functions/__main__/init_a0/end")


def find_corpus() -> Path | None:
    """`$A0_UPSTREAM_CORPUS`, else the first `shared/a0-upstream` above this file."""
    env = os.environ.get("A0_UPSTREAM_CORPUS")
    if env:
        return Path(env) if (Path(env) / "manifest.json").is_file() else None
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "a0-upstream"
        if (candidate / "manifest.json").is_file():
            return candidate
    return None


def load_manifest(corpus: Path) -> list[dict[str, Any]]:
    data = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    return [f for f in data["files"] if f.get("test", True)]


@dataclass
class Verdict:
    path: str
    ok: bool
    reason: str = ""

    def __str__(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.path}" + ("" if self.ok else f": {self.reason}")


def _think(text: str, reply: str) -> str:
    return f"<think>{text}</think>{reply}"


def _probe_tool() -> Any:
    """A tool that fails with a repairable error on its first call and succeeds on the second."""
    state = {"calls": 0}

    async def a0_compat_probe(step: int = 0) -> str:
        """Probe tool of the compatibility test. step: the attempt"""
        state["calls"] += 1
        if state["calls"] == 1:
            raise RepairableError("the probe failed on purpose; call it again")
        return "probe succeeded"

    return a0_compat_probe


def _errors_naming(agent: Any, path: Path) -> list[str]:
    found = []
    for agent_ in _agents(agent):
        for d in agent_.diagnostics:
            if getattr(d, "severity", "") == "error" and d.path and Path(d.path) == path:
                found.append(d.message)
    return found


def _agents(agent: Any) -> list[Any]:
    out = []
    while agent is not None:
        out.append(agent)
        agent = getattr(agent, "subordinate", None)
    return out


def _run_turn(nb: Path, replies: list[Any], message: str = "Run the compatibility check.",
              utility: list[Any] | None = None) -> tuple[Any, Any, str]:
    """(agent, turn or None, error text) of one turn in `nb`; stdout of the turn is swallowed."""
    from a0nb import Agent
    agent = None
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            agent = Agent(nb, model=replies)
            agent.register_tool(_probe_tool(), PROBE)
            turn = agent.ask(message)
    except Exception as exc:  # judged, not raised: the verdict names it
        return agent, None, f"{type(exc).__name__}: {exc}"
    return agent, turn, ""


def _turn_error(turn: Any, error: str) -> str:
    if error:
        return error
    if turn is None:
        return "no turn"
    if turn.error:
        return f"turn error: {turn.error}"
    if turn.text != FINAL:
        return f"the turn did not end with the final answer (got {str(turn.text)[:200]!r})"
    return ""


def _standard_replies() -> list[Any]:
    return [_think("I should probe first.", tool_reply(PROBE, step=1)),
            _think("The probe asked me to retry.", tool_reply(PROBE, step=2)),
            _think("The probe succeeded.", answer(FINAL))]


def _magic_turn(nb: Path, replies: list[Any]) -> str:
    """`%load_ext a0nb` and one `%a0 ask` in a real InteractiveShell whose folder is `nb` (UI points)."""
    import yaml
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    script = nb.parent / "replies.yaml"
    script.write_text(yaml.safe_dump([{"content": r} for r in replies]), encoding="utf-8")
    old_cwd, old_model = os.getcwd(), os.environ.get("A0NB_MODEL")
    if InteractiveShell.initialized():
        InteractiveShell.clear_instance()
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=cfg)
    shell.display_pub = CapturingDisplayPublisher()
    try:
        os.chdir(nb)
        os.environ["A0NB_MODEL"] = f"scripted:{script}"
        with contextlib.redirect_stdout(io.StringIO()):
            shell.run_line_magic("load_ext", "a0nb")
            result = shell.run_cell("%a0 ask Run the compatibility check.")
        if result.error_in_exec is not None:
            return f"%a0 ask failed: {result.error_in_exec!r}"
        return ""
    finally:
        os.chdir(old_cwd)
        if old_model is None:
            os.environ.pop("A0NB_MODEL", None)
        else:
            os.environ["A0NB_MODEL"] = old_model
        import atexit
        atexit.unregister(shell.atexit_operations)
        InteractiveShell.clear_instance()


def judge_extension(path: Path, point: str, label: str) -> Verdict:
    watch = CallWatch(str(path))
    with watch.active():
        if point in UI_POINTS:
            error = _magic_turn(path_nb(path), _standard_replies()[-1:])
            agent, turn = None, None
        else:
            agent, turn, error = _run_turn(path_nb(path), _standard_replies())
    if point not in UI_POINTS:
        error = _turn_error(turn, error)
    why = _why_not_imported(agent, path)
    if not watch.body_done or "failed to import" in why:
        return Verdict(label, False, f"did not import ({why or error or 'never loaded'})")
    if error:
        return Verdict(label, False, error)
    if not watch.called:
        return Verdict(label, False, f"imported, but nothing in it was called at point {point}")
    if point not in watch.points:
        return Verdict(label, False, f"a0nb never ran it at point {point} (ran at: {sorted(set(watch.points))})")
    if watch.escaped:
        return Verdict(label, False, "an exception escaped from " + watch.escaped[0])
    if agent is not None and (errors := _errors_naming(agent, path)):
        return Verdict(label, False, "error diagnostic: " + errors[0])
    return Verdict(label, True)


def path_nb(path: Path) -> Path:
    """The notebook folder a placed file belongs to (marked by the `.a0-compat-nb` file)."""
    for parent in path.parents:
        if (parent / ".a0-compat-nb").exists():
            return parent
    raise AssertionError(f"{path} is not inside a prepared notebook folder")


def _why_not_imported(agent: Any, path: Path) -> str:
    if agent is None:
        return ""
    for agent_ in _agents(agent):
        for d in agent_.diagnostics:
            if d.path and Path(d.path) == path:
                return d.message
    return ""


def judge_tool(path: Path, entry: dict[str, Any], label: str) -> Verdict:
    nb = path_nb(path)
    call = json.loads(json.dumps(entry["call"]).replace("{workdir}", str(nb)))
    name = call["tool_name"]
    is_response = entry["tool_name"] == "response"
    if "document" in json.dumps(call):
        (nb / "notes.txt").write_text("A0 compat notes: the sky is blue.\n", encoding="utf-8")
    replies = [tool_reply(name, **call["tool_args"])]
    if entry["tool_name"] == "call_subordinate":
        replies.append(answer("ready"))
    if not is_response:
        replies.append(answer(FINAL))
    watch = CallWatch(str(path))
    with watch.active():
        agent, turn, error = _run_turn(nb, replies)
    error = _turn_error(turn, error)
    why = _why_not_imported(agent, path)
    if not watch.body_done or "failed to import" in why:
        return Verdict(label, False, f"did not import ({why or error or 'never loaded'})")
    if not watch.called:
        return Verdict(label, False, f"imported, but the call {name!r} never reached it ({error or 'no error'})")
    if error:
        return Verdict(label, False, error)
    if watch.escaped:
        return Verdict(label, False, "an exception escaped from " + watch.escaped[0])
    calls = [c for c in agent.calls if c.role == "chat" and c.agent == 0]
    if is_response:
        return Verdict(label, True) if len(calls) == 1 else Verdict(label, False, "the response did not end the turn")
    if len(calls) < 2:
        return Verdict(label, False, "no model call after the tool")
    result = _tool_result_in(calls[1].messages)
    if result is None:
        return Verdict(label, False, "the next model call carries no tool result")
    unknown_text = "not found" if entry["tool_name"] != "unknown" else None
    bad = re.search(r"failed with \w+(Error|Exception)\b|Traceback \(most recent", result)
    if bad:
        return Verdict(label, False, f"the tool result is an error: {result[:300]!r}")
    if entry["tool_name"] == "unknown":
        if name not in result:
            return Verdict(label, False, f"the tool-not-found text does not name {name!r}: {result[:200]!r}")
    elif unknown_text and re.search(r"(no tool named|Tool \S+ not found)", result):
        return Verdict(label, False, f"the tool was not found: {result[:200]!r}")
    return Verdict(label, True)


def _tool_result_in(messages: list[dict[str, Any]]) -> str | None:
    for m in messages:
        text = m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        if text and '"tool_result"' in text:
            return text
    return None


_INCLUDE = re.compile(r"\{\{\s*include\s+['\"][^'\"]+['\"]\s*\}\}")
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}")


def static_fragments(text: str) -> list[str]:
    """The file's text outside `{{if}}` blocks, includes and placeholders, line by line."""
    depth, out = 0, []
    for line in text.splitlines():
        stripped = line.strip()
        if re.match(r"\{\{\s*if\b", stripped):
            depth += 1
        # code fences: upstream's read_prompt strips them from a prompt that is one JSON template
        if depth == 0 and not _INCLUDE.fullmatch(stripped) and not stripped.startswith("```"):
            for fragment in _PLACEHOLDER.split(line):
                if fragment.strip():
                    out.append(fragment.strip())
        if re.search(r"\{\{\s*endif\s*\}\}", stripped):
            depth = max(0, depth - 1)
    return out


def _missing(fragments: list[str], haystack: str) -> list[str]:
    flat = " ".join(haystack.split())
    return [f for f in fragments if " ".join(f.split()) not in flat]


def judge_prompt(path: Path, entry: dict[str, Any], corpus: Path, label: str) -> Verdict:
    nb = path_nb(path)
    if entry.get("loader_for"):
        md = nb / entry["loader_for"]
        watch = CallWatch(str(path))
        with watch.active():
            agent, turn, error = _run_turn(nb, [answer(FINAL)])
        error = _turn_error(turn, error)
        if error:
            return Verdict(label, False, error)
        if not watch.body_done or not watch.called:
            return Verdict(label, False, f"the variables loader did not run ({_why_not_imported(agent, path)})")
        if watch.escaped:
            return Verdict(label, False, "an exception escaped from " + watch.escaped[0])
        sent = _joined(agent.calls[0].messages)
        for name in entry.get("expect_filled", []):
            if "{{" + name + "}}" in sent:
                return Verdict(label, False, f"placeholder {{{{{name}}}}} left unfilled")
        return Verdict(label, True) if md.exists() else Verdict(label, False, "loader target missing")
    text = path.read_text(encoding="utf-8")
    if entry["expect_in"] == "first_call":
        agent, turn, error = _run_turn(nb, [answer(FINAL)])
        error = _turn_error(turn, error)
        if error:
            return Verdict(label, False, error)
        haystack = _joined(agent.calls[0].messages)
    else:
        from a0nb.files.api import render_prompt
        try:
            haystack = render_prompt(path.name, workdir=nb).text
        except Exception as exc:
            return Verdict(label, False, f"a0nb prompt failed: {type(exc).__name__}: {exc}")
    if m := _INCLUDE.search(haystack):
        return Verdict(label, False, f"unrendered include left: {m.group(0)}")
    missing = _missing(static_fragments(text), haystack)
    if missing:
        return Verdict(label, False, f"{len(missing)} static line(s) missing, e.g. {missing[0][:120]!r}")
    return Verdict(label, True)


def _joined(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                     for m in messages)


def place(corpus: Path, entry: dict[str, Any], nb: Path) -> Path:
    """Copy the file (a plugin file: its whole plugin folder) to where an Agent Zero user puts it."""
    (nb / ".a0-compat-nb").write_text("", encoding="utf-8")
    if entry["kind"] == "plugin":
        name = entry["plugin"]
        shutil.copytree(corpus / "plugins" / name, nb / "plugins" / name)
        if (nb / "plugins" / name / ".toggle-0").exists():
            toggle = nb / ".a0proj" / "plugins" / name / ".toggle-1"
            toggle.parent.mkdir(parents=True, exist_ok=True)
            toggle.write_text("", encoding="utf-8")
        return nb / entry["place"]
    target = nb / entry["place"]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus / entry["path"], target)
    if entry.get("loader_for"):
        md = nb / entry["loader_for"]
        shutil.copyfile(corpus / entry["loader_for"], md)
    return target


def judge(corpus: Path, entry: dict[str, Any], nb: Path) -> Verdict:
    label = entry["path"]
    path = place(corpus, entry, nb)
    kind = entry["kind"] if entry["kind"] != "plugin" else entry["role"]
    if kind == "extension":
        return judge_extension(path, entry["point"], label)
    if kind == "tool":
        return judge_tool(path, entry, label)
    return judge_prompt(path, entry, corpus, label)
