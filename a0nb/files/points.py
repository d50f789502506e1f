"""The extension API: every extension point a0nb fires, with its keyword arguments and what an
extension there may do. Extension folders are validated against this catalogue."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    name: str
    kwargs: tuple[str, ...]
    doc: str
    sync: bool = False  # async extensions are refused at sync points


def _p(name: str, kwargs: str, doc: str, sync: bool = False) -> Point:
    return Point(name, tuple(kwargs.split()) if kwargs else (), doc, sync)


POINTS: dict[str, Point] = {p.name: p for p in (
    _p("agent_init", "", "The agent was constructed (sync). Set defaults in `agent.data`.", sync=True),
    _p("monologue_start", "loop_data", "A user message starts a monologue; `loop_data` is fresh."),
    _p("message_loop_start", "loop_data", "Top of every loop pass; `loop_data.iteration` is already incremented."),
    _p("message_loop_prompts_before", "loop_data", "Before the prompt is built (history compaction waits here)."),
    _p("system_prompt", "system_prompt loop_data",
       "Append sections (strings) to `system_prompt`; each becomes a system part with this file as provenance."),
    _p("message_loop_prompts_after", "loop_data",
       "The system sections and history output are built; edit them, or add `loop_data.extras_temporary` / "
       "`extras_persistent` keys (each key is attributed to the file that set it)."),
    _p("before_main_llm_call", "loop_data", "The messages for the chat call are final."),
    _p("chat_model_call_before", "call_data", "May swap `call_data['messages']` or `call_data['model']`."),
    _p("chat_model_call_after", "call_data response reasoning", "The chat model answered."),
    _p("util_model_call_before", "call_data", "A utility call (summary, compaction) is about to run."),
    _p("util_model_call_after", "call_data response", "A utility call answered."),
    _p("reasoning_stream_chunk", "loop_data stream_data", "A reasoning delta; `stream_data` = {chunk, full}, mutable."),
    _p("reasoning_stream", "loop_data text", "The reasoning so far."),
    _p("reasoning_stream_end", "loop_data", "Reasoning finished."),
    _p("response_stream_chunk", "loop_data stream_data", "A response delta; `stream_data` = {chunk, full}, mutable."),
    _p("response_stream", "loop_data text parsed",
       "The response so far (>= 25 characters) and its tolerant parse when it is an object."),
    _p("response_stream_end", "loop_data", "The response stream finished."),
    _p("tool_execute_before", "tool_args tool_name", "Edit `tool_args` in place to change the call."),
    _p("tool_execute_after", "response tool_name", "May edit `response.message`."),
    _p("tool_output_update", "ctx", "Tool progress for displays; `ctx` = {content}."),
    _p("hist_add_before", "content_data ai", "Every history add (sync); edit `content_data['content']`.", sync=True),
    _p("hist_add_tool_result", "data", "A tool result is about to enter history (sync); edit `data`.", sync=True),
    _p("error_format", "msg", "A repairable error is formatted for the model; edit `msg['message']`."),
    _p("message_loop_end", "loop_data", "End of a loop pass (also after errors)."),
    _p("monologue_end", "loop_data", "The monologue ended (answer, error or interrupt)."),
    _p("process_chain_end", "data", "The whole user message was processed."),
    _p("embedding_model_changed", "old new folder",
       "A memory folder's vectors were re-embedded with a new embedding model (sync).", sync=True),
    # Agent Zero's application points, fired by the notebook layer where it has their equivalent
    _p("startup_migration", "", "`%load_ext a0nb`, before everything else: migrate the user's files. No agent."),
    _p("banners", "banners frontend_context",
       "`%load_ext a0nb` (the notebook's welcome): append dicts (title, html, type, ...) to `banners`; "
       "they are shown under the cell. No agent (None), as in Agent Zero."),
    _p("user_message_ui", "data",
       "`%a0 ask` / `%%a0` received a message from the notebook (not from Python's `agent.ask`); edit "
       "`data['message']` / `data['attachment_paths']` before the turn starts."),
    _p("job_loop", "", "Agent Zero's background tick: after a notebook cell ran, at most once a minute. No agent."),
    # observation points for the inspector (a0nb additions)
    _p("call_recorded", "record", "A model call's CallRecord is complete (chat and utility calls)."),
    _p("history_compacted", "event", "History was compacted; `event` holds tokens before/after and what replaced what."),
    _p("skills_reattached", "skills tokens budget", "Loaded skills were re-attached after compaction."),
)}

FUNCTION_POINT_PREFIX = "_functions/"

# Agent Zero's points that have no counterpart in a notebook (an extension placed there never runs), with why
UPSTREAM_ONLY: dict[str, str] = {p: "Agent Zero's web UI websocket point; the notebook is the UI, there is no websocket"
                                 for p in ("webui_ws_connect", "webui_ws_disconnect", "webui_ws_event")}


def is_known(point: str) -> bool:
    """Named points and the implicit `_functions/<module>/<qualname>/start|end` points."""
    if point in POINTS:
        return True
    return point.startswith(FUNCTION_POINT_PREFIX) and point.rsplit("/", 1)[-1] in ("start", "end")

