"""Static renderings of a fixed scripted turn: golden files, no volatile values, IPython display protocol,
composition bars, compaction and reattached-skill rendering.
Regenerate the goldens with `A0NB_REGEN_GOLDEN=1 pytest tests/inspector`."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspector_nb import WITH_WORKDIR, regen

from a0nb.engine.compaction import CompactionEvent, Replacement
from a0nb.inspector import (Rendering, render_call, render_diff, render_extras, render_history, render_prompt,
                            render_turn)
from a0nb.engine.records import Part

GOLDEN = Path(__file__).parent / "golden"


def readable(html: str) -> str:
    """One tag boundary per line, so golden diffs are reviewable."""
    return re.sub(r"(</(?:div|details|tr|summary|table|pre|svg|li|ul)>)", r"\1\n", html)


def renderings(agent: Any, turn: Any) -> dict[str, Rendering]:
    calls = turn.calls
    out = {"turn": render_turn(turn, agent=agent), "prompt": render_prompt(agent), "extras": render_extras(agent),
           "history": render_history(agent)}
    for c in calls:
        out[f"call_{c.index}"] = render_call(c, agent=agent)
    for a, b in zip(calls, calls[1:]):
        out[f"diff_{a.index}_{b.index}"] = render_diff(a, b, agent=agent)
    return out


def test_golden_renderings(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    got = renderings(agent, turn)
    GOLDEN.mkdir(exist_ok=True)
    mismatched = []
    for name, r in got.items():
        for suffix, value in ((".txt", r.text + "\n"), (".html", readable(r.html))):
            path = GOLDEN / f"{name}{suffix}"
            if regen() or not path.exists():
                path.write_text(value, encoding="utf-8")
            elif path.read_text(encoding="utf-8") != value:
                mismatched.append(path.name)
    assert not mismatched, f"renderings differ from {mismatched}; regenerate with A0NB_REGEN_GOLDEN=1 pytest tests/inspector"


def test_same_turn_in_two_folders_renders_identically(turn_factory: Any) -> None:
    # equal-length folder names: the prompt holds the folder path, so token counts depend on its length
    agent_a, turn_a = turn_factory("run_a", files=WITH_WORKDIR)
    agent_b, turn_b = turn_factory("run_b", files=WITH_WORKDIR)
    assert str(agent_a.workdir) in turn_a.calls[0].messages[0]["content"]
    got_a, got_b = renderings(agent_a, turn_a), renderings(agent_b, turn_b)
    assert got_a.keys() == got_b.keys()
    for name in got_a:
        data_a, meta_a = got_a[name]._repr_mimebundle_()
        data_b, _ = got_b[name]._repr_mimebundle_()
        assert data_a == data_b, name
        for value in data_a.values():
            assert str(agent_a.workdir) not in value and str(agent_b.workdir) not in value
            assert str(agent_a.hierarchy.home) not in value
        assert set(meta_a) == {"a0"}
    # the default (no agent) resolves paths against the working directory, which is the notebook folder
    assert render_turn(turn_b).html == got_b["turn"].html


def test_volatile_values_only_in_metadata(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    r = render_turn(turn, agent=agent)
    data, meta = r._repr_mimebundle_()
    calls = meta["a0"]["calls"]
    assert [c["call"] for c in calls] == [c.index for c in turn.calls]
    assert all(c["latency"] is not None for c in calls)
    for c in turn.calls:
        for value in data.values():
            assert repr(c.latency) not in value and f"{c.latency:.4f}" not in value
    call_meta = render_call(turn.calls[0], agent=agent)._repr_mimebundle_()[1]["a0"]
    assert set(call_meta) >= {"latency", "cost", "usage", "call"}


def test_display_protocol_with_ipython(scripted: tuple[Any, Any]) -> None:
    from IPython.core.formatters import DisplayFormatter
    agent, turn = scripted
    data, metadata = DisplayFormatter().format(render_turn(turn, agent=agent))
    assert data["text/plain"].startswith("Turn 1 · ok · 3 model calls")
    assert data["text/html"].startswith("<div")
    assert "latency" in metadata["a0"]
    only_text, _ = render_turn(turn, agent=agent)._repr_mimebundle_(include={"text/plain"})
    assert list(only_text) == ["text/plain"]
    no_html, _ = render_turn(turn, agent=agent)._repr_mimebundle_(exclude={"text/html"})
    assert list(no_html) == ["text/plain"]
    # a Rendering is the (data, metadata) pair itself, so Turn._repr_mimebundle_ can return render_turn(turn)
    data, metadata = DisplayFormatter().format(turn)
    assert set(data) == {"text/plain", "text/html"} and "a0" in metadata
    r = render_call(turn.calls[0], agent=agent)
    assert pickle.loads(pickle.dumps(r)) == r and copy.deepcopy(r).meta == r.meta


def test_html_is_static_and_inline_styled(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    for name, r in renderings(agent, turn).items():
        lowered = r.html.lower()
        assert "<script" not in lowered and "<style" not in lowered and "javascript:" not in lowered, name
        assert " on" not in re.sub(r'"[^"]*"', '""', lowered).replace(" one", ""), name  # no onclick= etc.
        assert lowered.count("<details") == lowered.count("</details>"), name
        assert lowered.count("<div") == lowered.count("</div>"), name


def charts_svg(html: str) -> list[str]:
    import base64
    return [base64.b64decode(m).decode("utf-8") for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)]


def test_turn_transcript_shows_steps_answer_and_charts(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    html = render_turn(turn, agent=agent).html
    for needle in ("Printing rows", "Print the rows first", "code_execution", "row 39", "no valid tool request",
                   "this reply is not JSON", "Printed 40 rows.", "forty rows", "Tokens per model call", "History tokens"):
        assert needle in html, needle
    # the charts are images with data: URIs (an untrusted notebook, GitHub and nbviewer show those; inline <svg> not)
    assert html.count("<svg") == 0 and html.count('src="data:image/svg+xml;base64,') == 2
    svgs = charts_svg(html)
    assert all(s.startswith("<svg") and s.endswith("</svg>") for s in svgs)
    # the 40-row result is collapsed behind a <details> summary naming its size
    assert re.search(r"result · row 0 <span[^>]*>\(\d+ characters\)", html)


def test_call_view_has_messages_composition_and_provenance(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    c = turn.calls[-1]
    r = render_call(c, agent=agent)
    for bucket in c.composition():
        assert bucket in r.html, bucket
    assert "extras persistent: notebook_note" in r.html and "extras temporary: current_datetime" in r.html
    assert "agent.system.main.md (notebook)" in r.html
    assert "overrode &lt;a0nb&gt;/prompts/agent.system.main.md" in r.html  # the bundled copy the notebook file beat
    assert "./extensions/message_loop_prompts_after/_50_notebook_note.py" in r.html
    assert "&lt;a0nb&gt;/extensions/system_prompt/_10_main_prompt.py" in r.html
    assert r.html.count(">system</span>") >= 1 and ">assistant</span>" in r.html and ">user</span>" in r.html
    assert r.text.splitlines()[0] == f"Call #{c.index} · chat · scripted:replies.yaml · {len(c.messages)} messages · " \
                                     f"{len(c.parts)} parts · {c.tokens:,} tokens"


def test_compaction_and_reattached_skills_render(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    event = CompactionEvent(4000, 900, 1200, "truncation", (Replacement("topic 1 message 2", "truncated", 3500, 400),))
    turn.compactions.append(event)
    c = turn.calls[-1]
    skill = Part("skill", "skill: pandas-inspect", "Use df.info() first.", 7, len(c.messages) - 1,
                 "skill pandas-inspect reattached after compaction", (), "_65_include_loaded_skills", "reattached")
    turn.calls[-1] = dataclasses.replace(c, parts=[*c.parts, skill])
    html = render_turn(turn, agent=agent).html
    assert "history 4,000 → 900 tokens" in html and "topic 1 message 2" in html
    # placed before the call whose history size is closest to the event's tokens_after (the last one here)
    assert html.index("Printing rows") < html.index("history 4,000 → 900") < html.index("<b>Answering</b>")
    chart = "".join(charts_svg(html))
    assert "stroke-dasharray=\"5 3\"" in chart and "budget 1,200" in chart
    assert "reattached skills" in html
    assert "1 compaction" in render_turn(turn, agent=agent).text
    hist = render_history(agent)
    assert "Compactions" in hist.html and "compaction" in hist.text
    call_html = render_call(turn.calls[-1], agent=agent).html
    assert re.search(r"reattached skills <span[^>]*>7 \(", call_html) and ">reattached</span>" in call_html


def test_long_messages_are_capped(scripted: tuple[Any, Any]) -> None:
    agent, turn = scripted
    c = dataclasses.replace(turn.calls[0], messages=[*turn.calls[0].messages,
                                                     {"role": "user", "content": "x" * 50_000}])
    html = render_call(c, agent=agent, cap=1000).html
    assert "49,000 more characters" in html and "x" * 1001 not in html
    limited = render_call(c, agent=agent, messages_limit=2).html
    assert "2 earlier messages are not shown" in limited


def test_importing_the_inspector_is_cheap() -> None:
    code = ("import sys, a0nb.inspector; bad = [m for m in ('IPython', 'ipywidgets', 'litellm') if m in sys.modules];"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("value", [1, 2071, 12_345])
def test_charts_scale_to_their_data(value: int) -> None:
    from a0nb.inspector.svg import _nice
    top = _nice(value)
    assert top >= value and top % 4 == 0
