"""Native tool calls for providers that have them (tag `tools`): sends the agent's tool schemas when the
setting `native_tools` is on, and folds streamed tool-call fragments into `reply.tool_calls` either way
(the loop accepts a native call as the tool request when the text holds none)."""
from a0nb.ext import ProviderExtension
from a0nb.ext import delta_of, field


class NativeToolCalls(ProviderExtension):
    required_tags = frozenset({"tools"})

    def initialize_request(self, native, state):
        schemas = state["config"].tools
        if schemas:
            request = state["request"]
            request["tools"] = schemas
            request.setdefault("tool_choice", "auto")
        return native, state

    def process_chunk(self, chunk, deltas, state):
        delta = delta_of(chunk)
        calls = field(delta, "tool_calls") if delta is not None else None
        if calls:
            fold(calls, state["partial"]["tool_calls"])
        return deltas

    def finalize(self, reply, state):
        folded = state["partial"]["tool_calls"]
        if folded:
            reply.tool_calls = [
                {"id": slot["id"] or f"call_{index}", "type": "function",
                 "function": {"name": slot["name"], "arguments": "".join(slot["arguments"])}}
                for index, slot in sorted(folded.items())]
        return reply


def fold(calls, slots):
    """Providers send a call's id and name once and its arguments as string fragments, keyed by index."""
    for call in calls:
        index = field(call, "index") or 0
        slot = slots.get(index)
        if slot is None:
            slot = slots[index] = {"id": None, "name": "", "arguments": []}
        call_id = field(call, "id")
        if call_id:
            slot["id"] = call_id
        function = field(call, "function")
        if function is not None:
            name = field(function, "name")
            if name:
                slot["name"] = name
            fragment = field(function, "arguments")
            if fragment:
                slot["arguments"].append(fragment)
