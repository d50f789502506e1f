"""Reasoning sent as text: a reply that opens with <think>…</think> (or <reasoning>…</reasoning>) streams that part
as reasoning and the rest as the response. As Agent Zero does, for every provider, until the reply brings reasoning
on the provider's own channel (litellm's `reasoning_content`): then the tags are left as text. (A model served
through an OpenAI-compatible server often puts its thinking in the text, with the channel empty.)"""
from a0nb.ext import ProviderExtension
from a0nb.ext import ThinkSplitter


class ThinkTags(ProviderExtension):
    forbidden_tags = frozenset({"replayed"})  # a recorded reply was split when it was recorded

    def process_chunk(self, chunk, deltas, state):
        reasoning, response = deltas
        if reasoning and "think_splitter" not in state:  # reasoning on the provider's own channel: tags stay text
            state["think_passing"] = True
            return deltas
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
