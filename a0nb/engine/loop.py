"""The agent loop in Agent Zero's order (reference §1.2): a monologue of loop passes, each
building the prompt, calling the chat model, and running the requested tool. Behaviour lives in
extensions; this module only sequences the points."""
from __future__ import annotations

import asyncio
import contextvars
from typing import Any, Sequence

from a0nb.engine import approval, include_alias
from a0nb.engine.extract import ToolRequest, first_closed_object, parse_tool_request, tool_request_from_native
from a0nb.engine.loop_data import Intervention, LoopData
from a0nb.engine.history import History
from a0nb.engine.protocols import LoopAgent, TurnAgent
from a0nb.engine.tool import Response, Tool, Tools
from a0nb.engine.tool_thread import run_limited
from a0nb.engine.turn import Turn
from a0nb.providers.foreground import FOREGROUND
from a0nb.errors import A0Error, ConfigError, Misformat, RepairableError, TurnError, TurnInterrupted
from a0nb.resources import user_home


async def run_turn(agent: TurnAgent, turn: Turn, attachments: Sequence[Any], keep_history: bool) -> Turn:
    """One user message to an answer; an interrupt or an error leaves history consistent."""
    saved = None
    if not keep_history:
        saved, agent.history = agent.history, History()
    agent.control.start()
    policy = None
    with FOREGROUND:  # background warm-ups (litellm's import) give way while the turn runs
        try:
            message = agent.start_turn(turn)
            policy = approval.begin(agent)  # this turn's approval policy: code run during it cannot change it
            agent.hist_add_user_message(message, attachments=attachments)
            answer = await agent.monologue()  # (what the user sees expands `§§include(path)`: history keeps it)
            turn.text = agent.mask(include_alias.expand(answer, agent.workdir, (agent.workdir, user_home()),
                                                        agent.diagnostics))
        except (asyncio.CancelledError, TurnInterrupted) as exc:
            turn.interrupted, turn.error = True, "interrupted by the user"
            await handle_interrupt(agent, agent.models.streamed)
            raise TurnInterrupted("the turn was interrupted; history is consistent and the next ask works") from exc
        except A0Error as exc:
            exc.args = agent.mask(exc.args)  # an error message quotes requests and replies: masked like them
            turn.error = str(exc)
            exc.turn = turn  # type: ignore[attr-defined]
            raise
        finally:
            agent.control.end()
            if policy is not None:
                approval.end(policy)
            turn.calls = [c for c in agent.models.records if c.turn == turn.index]
            if saved is not None:
                agent.history = saved
            await agent.fire("process_chain_end", data={"turn": turn})
    return turn


async def monologue(agent: LoopAgent) -> str:
    """Loop passes until a tool ends the turn (`break_loop`), with Agent Zero's restart on intervention."""
    while True:
        ld = agent.loop_data = LoopData(user_message=agent.last_user_message)
        await agent.fire("monologue_start", loop_data=ld)
        try:
            while True:
                answer = await loop_pass(agent, ld)
                if answer is not None:
                    return answer
        except Intervention:
            continue
        finally:
            await agent.fire("monologue_end", loop_data=ld)


async def loop_pass(agent: LoopAgent, ld: LoopData) -> str | None:
    ld.iteration += 1
    ld.params_temporary = {}
    if ld.iteration >= agent.settings.max_iterations:
        raise TurnError(f"the turn reached the limit of {agent.settings.max_iterations} loop passes without an answer "
                        "(raise it with the setting max_iterations / A0NB_MAX_ITERATIONS)")
    await agent.fire("message_loop_start", loop_data=ld)
    agent.checkpoint(ld)
    try:
        messages = await agent.prepare_prompt(ld)
        await agent.fire("before_main_llm_call", loop_data=ld)
        agent.checkpoint(ld)
        reply = await agent.call_chat_model(ld, messages)
        return await handle_reply(agent, ld, reply.content, reply.tool_calls, agent.models.take_parsed(reply.content))
    except Intervention:
        return None
    except (TurnInterrupted, asyncio.CancelledError):
        raise
    except Exception as exc:  # Agent Zero's handle_exception: its `_functions/.../end` extensions may clear it
        await agent.handle_exception("message_loop", exc)
        return None
    finally:
        await agent.finish_record(ld)
        await agent.fire("message_loop_end", loop_data=ld)


async def handle_reply(agent: LoopAgent, ld: LoopData, text: str, tool_calls: list[dict[str, Any]],
                       parsed: ToolRequest | None = None) -> str | None:
    """Repeat detection, then the tool request (misformat feeds back, with a circuit breaker).
    `parsed`: the request already parsed from this very `text` while it streamed."""
    request: ToolRequest | Misformat
    if tool_calls and not first_closed_object(text or ""):
        request = tool_request_from_native(tool_calls)
        if isinstance(request, ToolRequest):
            text = request.raw
    else:
        request = parsed or parse_tool_request(text)
    if text and text == ld.last_response:  # an empty first reply is a misformat, not a repeat of ''
        agent.hist_add_ai_response(text)
        _no_progress(agent, ld, text, "sent the same reply twice in a row")
        agent.hist_add_warning(agent.read_prompt("fw.msg_repeat.md"))
        return None
    ld.last_response = text
    agent.hist_add_ai_response(text)
    if isinstance(request, Misformat):
        _no_progress(agent, ld, text, str(request))
        agent.hist_add_warning(agent.read_prompt("fw.msg_misformat.md", reason=str(request)))
        return None
    ld.no_progress = 0
    if ld.record is not None:
        ld.record.tool_request = {"tool_name": request.full_name, "tool_args": request.tool_args,
                                  "headline": request.headline, "thoughts": list(request.thoughts)}
    return await run_tool(agent, ld, request, text)


def _no_progress(agent: LoopAgent, ld: LoopData, text: str, reason: str) -> None:
    """The circuit breaker Agent Zero lacks: N replies in a row without a valid, new tool request."""
    ld.no_progress += 1
    if ld.no_progress >= agent.settings.misformat_limit:
        quoted = text if len(text) <= 400 else text[:400] + f"… ({len(text)} characters)"
        raise TurnError(f"the model sent {ld.no_progress} replies in a row without a valid tool request "
                        f"(last problem: {reason}). Its last reply was:\n{quoted}")


def take_intervention(agent: TurnAgent, ld: LoopData) -> None:
    """The user's message sent mid-turn: keep what the tool and the stream produced so far, start a new
    topic with the message, and restart the monologue (Agent Zero's intervention)."""
    text, agent.intervention = agent.intervention, None
    tool = ld.current_tool
    if tool is not None and tool.progress:
        agent.hist_add_message(False, {"tool_name": tool.full_name, "tool_result": tool.progress}, "tool_result")
    if agent.models.streamed:
        agent.hist_add_ai_response(agent.models.streamed)
        agent.models.streamed = ""
    agent.history.new_topic()
    content = agent.parse_prompt("fw.intervention.md", message=text, attachments=[], system_message=[])
    agent.hist_add_message(False, drop_empty(content), "intervention")
    raise Intervention()


def drop_empty(content: Any) -> Any:
    """A rendered message without its empty fields."""
    if isinstance(content, dict):
        return {k: v for k, v in content.items() if v not in ("", [], None, {})}
    return content


def create_tool(agent: Any, tools: Tools, request: ToolRequest, message: str, ld: LoopData) -> Tool:
    """The requested tool, or the bundled `unknown` tool under the requested name (the model is told so)."""
    try:
        info = tools.resolve(request.tool_name)
    except OSError:  # a name the file system refuses (e.g. longer than 255 bytes) names no tool file
        info = None
    info = info or tools.claim(request.tool_name, dict(request.tool_args))  # a plugin's can_handle_tool_call
    unknown = info is None
    if info is None:
        info = tools.resolve("unknown")
        if info is None:
            raise ConfigError("the bundled `unknown` tool is missing from tools/ (reinstall a0nb)")
    tool = info.create(agent, request.method, dict(request.tool_args), message, ld)
    if unknown:
        tool.name = request.tool_name
    return tool


async def run_tool(agent: LoopAgent, ld: LoopData, request: ToolRequest, message: str) -> str | None:
    """Agent Zero's tool lifecycle (reference §2.5); tool exceptions go back to the model."""
    agent.project_state.unpin()  # the tool may write a secret: until it ran, every masking looks at the files
    tool = agent.get_tool(request, message, ld)
    ld.current_tool = tool
    try:
        args = dict(request.tool_args)
        agent.checkpoint(ld)
        await tool.before_execution(**args)
        agent.checkpoint(ld)
        await agent.fire("tool_execute_before", tool_args=args, tool_name=request.tool_name)
        tool.args = args
        allowed, runtime, mode = True, "", ""
        if approval.gated(request.tool_name):  # a code tool: the turn's policy decides
            allowed, runtime, mode = await approval.approved(agent, request.tool_name, request.method, args)
        try:
            if not allowed:
                response = Response(message=agent.read_prompt("fw.code.denied.md", runtime=runtime, policy=mode))
            else:
                response = await _execute(agent, tool, args, request)
        except (A0Error, RepairableError, asyncio.CancelledError):
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the agent's event loop
            response = Response(message=agent.tool_error_text(request.full_name, exc))
        if not isinstance(response, Response):  # a tool class returning None or text would break after_execution
            bad = TypeError(f"execute() returned {type(response).__name__}, not a0nb.Response")
            response = Response(message=agent.tool_error_text(request.full_name, bad))
        agent.project_state.pin()  # the tool's code ran: one fresh look, kept for the rest of the step ...
        agent.checkpoint(ld)
        await agent.fire("tool_execute_after", response=response, tool_name=request.tool_name)
        if type(tool).after_execution is not Tool.after_execution:  # ... unless it has more code to run
            agent.project_state.unpin()
        await tool.after_execution(response)
        agent.project_state.pin()
        if ld.record is not None:
            ld.record.tool_result = response.message
        agent.checkpoint(ld)
        return response.message if response.break_loop else None
    finally:
        ld.current_tool = None


async def _execute(agent: LoopAgent, tool: Tool, args: dict[str, Any], request: ToolRequest) -> Response:
    """`tool.execute` under the tool_timeout setting (0 = none); a tool that hangs is left behind, the loop goes on."""
    limit = agent.settings.tool_timeout
    if not limit:
        return await tool.execute(**args)
    try:  # in this task under a timer (no task per call); the tool's code in a copy of the context, as in a task
        if getattr(tool, "code_in_thread", False):  # (its code runs in a thread, in a copy of its own)
            return await run_limited(tool.execute(**args), limit)
        return await run_limited(tool.execute(**args), limit, contextvars.copy_context())
    except asyncio.TimeoutError:
        return Response(message=f"tool {request.full_name} did not finish within {limit:g} s and was stopped "
                                "(setting tool_timeout / A0NB_TOOL_TIMEOUT)")


async def handle_interrupt(agent: LoopAgent, ld_streamed: str) -> None:
    """Leave history consistent after an interrupt: keep the partial reply, say it was interrupted."""
    if ld_streamed.strip():
        agent.hist_add_ai_response(ld_streamed)
    agent.hist_add_warning(agent.read_prompt("fw.msg_interrupted.md"))


__all__ = ["LoopData", "run_turn", "monologue", "loop_pass", "handle_reply", "run_tool", "Intervention", "TurnInterrupted"]
