"""Reasoning for providers without a reasoning channel: a reply that opens with <think>…</think> (or
<reasoning>…</reasoning>) streams that part as reasoning and the rest as the response."""
from a0nb.ext import ProviderExtension
from a0nb.ext import ThinkSplitter


class ThinkTags(ProviderExtension):
    forbidden_tags = frozenset({"reasoning"})  # a provider with its own channel sends reasoning there

    def process_chunk(self, chunk, deltas, state):
        reasoning, response = deltas
        if not response:
            return deltas
        splitter = state.get("think_splitter")
        if splitter is None:
            opening = response.lstrip()
            if opening and opening[0] != "<":  # the reply opens with text, not a tag: nothing to split, ever
                state["think_passing"] = True
                return deltas
            splitter = state["think_splitter"] = ThinkSplitter()
        moved, response = splitter.feed(response)
        return reasoning + moved, response

    def passes_through(self, state):
        if "think_passing" in state:
            return True
        splitter = state.get("think_splitter")
        return splitter is not None and splitter.passing

    def end_stream(self, state):
        splitter = state.get("think_splitter")
        return splitter.flush() if splitter is not None else ("", "")
