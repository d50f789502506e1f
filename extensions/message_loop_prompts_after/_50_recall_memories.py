"""Recall (Agent Zero's schedule: passes 0, 3, 6, ... by `memory_recall_interval`): memories and solutions
similar to the conversation → extras_persistent["memories"/"solutions"], each with its provenance
(id, area, score, source file). A failing embedder is reported; the turn goes on without recall."""
from a0nb.ext import Extension, memories_of, render_content

MEMORIES, SOLUTIONS, HISTORY_CHARS = 5, 3, 2000


def conversation_query(loop_data):
    """The user's message first (embedders truncate long input), then the end of the history."""
    message = loop_data.user_message
    text = ""
    if message is not None:
        content = message.content
        if isinstance(content, dict):
            content = content.get("user_message", content)
        text = content if isinstance(content, str) else render_content(content)
    tail = "\n".join(render_content(item.content) for item in loop_data.history_output[-3:])
    return (text.strip() + "\n" + tail[-HISTORY_CHARS:]).strip()


class RecallMemories(Extension):
    def execute(self, loop_data=None, **kwargs):
        settings = self.agent.settings
        if not settings.memory_recall or loop_data.iteration % max(1, settings.memory_recall_interval):
            return
        persistent = loop_data.extras_persistent
        persistent.pop("memories", None)
        persistent.pop("solutions", None)
        query = conversation_query(loop_data)
        if not query:
            return
        threshold = settings.memory_recall_threshold
        try:
            memories = memories_of(self.agent)
            if memories.is_empty():
                return
            found = memories.search(query, limit=MEMORIES, threshold=threshold, areas=("main", "fragments"))
            solved = memories.search(query, limit=SOLUTIONS, threshold=threshold, areas=("solutions",))
        except Exception as exc:  # the embedder or the store: reported, and the turn goes on without recall
            self.agent.diagnostics.add("error", "memory", f"memory recall failed, the turn goes on without it: "
                                       f"{type(exc).__name__}: {exc}", None,
                                       fix="check the embedding_model setting (or set memory_recall false)")
            return
        if found:
            persistent["memories"] = self.agent.read_prompt(
                "agent.system.memories.md", memories="\n\n".join(m.render() for m in found)).strip()
        if solved:
            persistent["solutions"] = self.agent.read_prompt(
                "agent.system.solutions.md", solutions="\n\n".join(m.render() for m in solved)).strip()
