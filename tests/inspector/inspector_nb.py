"""The fixed notebook folder and scripted turn the inspector tests render: notebook-level prompt overrides,
a persistent extras key from a notebook extension, no-op overrides of extras that list files or skills."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import yaml

from a0nb import Agent
from a0nb.engine.tokens import TokenCounter, fallback_token_count

CODE = "print('\\n'.join(f'row {i}' for i in range(40)))"
REPLIES = yaml.safe_dump([
    {"content": json.dumps({"thoughts": ["Print the rows first"], "headline": "Printing rows",
                            "tool_name": "code_execution", "tool_args": {"runtime": "python", "code": CODE}}),
     "reasoning": "The user wants forty rows; Python prints them."},
    "this reply is not JSON",
    json.dumps({"thoughts": ["The rows are printed"], "headline": "Answering", "tool_name": "response",
                "tool_args": {"text": "Printed 40 rows."}}),
], sort_keys=False)

FILES = {
    "replies.yaml": REPLIES,
    "prompts/agent.system.main.md": "# Test agent\nYou work in the notebook folder and reply with one JSON object.\n",
    "prompts/agent.system.tools.md": "## Tools\nUse code_execution to run Python and response to answer.\n",
    "prompts/agent.system.skills.md": "## Skills\nNo skills are needed here.\n",
    "prompts/fw.initial_message.md": '{"thoughts": ["greet"], "headline": "Hello", "tool_name": "response", '
                                     '"tool_args": {"text": "Hello from the test notebook."}}\n',
    "extensions/message_loop_prompts_after/_50_notebook_note.py":
        "from a0nb import Extension\n\n\nclass Note(Extension):\n    def execute(self, loop_data=None, **kwargs):\n"
        "        loop_data.extras_persistent['notebook_note'] = 'Rows are numbered from 0.'\n",
    # same-name overrides keep the goldens independent of the bundled skills and of the folder listing
    "extensions/message_loop_prompts_after/_63_recall_relevant_skills.py":
        "from a0nb import Extension\n\n\nclass NoRecall(Extension):\n    pass\n",
    "extensions/message_loop_prompts_after/_75_include_workdir_extras.py":
        "from a0nb import Extension\n\n\nclass NoTree(Extension):\n    pass\n",
}

QUESTION = "Print 40 rows, please."


# the folder path inside the prompt makes token counts depend on its length, so goldens leave it out
WITH_WORKDIR = {"prompts/agent.system.main.md": "# Test agent\nYou work in `{{workdir}}`; reply with one JSON object.\n"}


def make_notebook(folder: Path, files: dict[str, str] | None = None) -> Path:
    for rel, text in {**FILES, **(files or {})}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def run_turn(folder: Path, files: dict[str, str] | None = None, **agent_kwargs: Any) -> tuple[Agent, Any]:
    agent = Agent(make_notebook(folder, files), model="scripted:replies.yaml", **agent_kwargs)
    # token counts must not depend on whether tiktoken's data file is installed
    agent.shared.counter = TokenCounter(fallback_token_count)
    agent.history.counter = agent.shared.counter
    return agent, agent.ask(QUESTION)


# read at import: the suite's autouse fixture removes every A0NB_* variable before each test runs
_REGEN = bool(os.environ.get("A0NB_REGEN_GOLDEN"))


def regen() -> bool:
    return _REGEN
