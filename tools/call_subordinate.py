"""The `call_subordinate` tool: hand a sub-task to a subordinate agent (optionally with another
profile); its model calls are nested under this call's record."""
from a0nb.ext import Response, Tool


class CallSubordinate(Tool):
    description = "Delegate a sub-task to a subordinate agent."
    parameters = {"type": "object", "required": ["message"], "properties": {
        "message": {"type": "string", "description": "the sub-task, with everything the subordinate needs"},
        "profile": {"type": "string", "description": "the subordinate's agent profile (default: this one's)"},
        "reset": {"type": "boolean", "description": "start a new subordinate instead of continuing the last"}}}

    async def execute(self, message="", profile=None, reset=False, **kwargs):
        if not str(message).strip():
            return Response(message="call_subordinate needs a non-empty `message` describing the sub-task.")
        reset = reset if isinstance(reset, bool) else str(reset).lower() in ("true", "1", "yes")
        if profile and profile not in self.agent.profiles():
            names = ", ".join(sorted(self.agent.profiles()))
            return Response(message=f"unknown profile {profile!r}; available profiles: {names}")
        sub = self.agent.subordinate_agent(profile=profile or None, reset=reset)
        sub.hist_add_user_message(str(message))
        answer = await sub.monologue()
        sub.history.new_topic()
        return Response(message=answer)
