"""Agent Zero's `helpers.persist_chat`: a chat saved as JSON under `chats/<context id>/` in the base folder
(a0nb: `$A0NB_HOME`), with the message files of long tool results beside it."""
from __future__ import annotations

import json
import os
import shutil
from typing import Any

from a0nb.compat.helpers import files

CHATS_FOLDER = "chats"


def get_chat_folder_path(ctxid: str) -> str:
    return files.get_abs_path(CHATS_FOLDER, ctxid)


def get_chat_msg_files_folder(ctxid: str) -> str:
    return os.path.join(get_chat_folder_path(ctxid), "messages")


def _serialize(context: Any) -> dict[str, Any]:
    agents = []
    agent = getattr(context, "agent0", None)
    while agent is not None:
        engine = agent._engine
        agents.append({"number": engine.number, "data": {k: v for k, v in engine.data.items() if _jsonable(v)},
                       "history": [{"id": m.id, "ai": m.ai, "kind": m.kind, "content": m.content}
                                   for m in engine.history.messages()]})
        agent = agent.of(engine.subordinate) if getattr(engine, "subordinate", None) is not None else None
    return {"id": context.id, "type": context.type.value, "agents": agents, "log": context.log.output()}


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def save_tmp_chat(context: Any) -> str:
    path = os.path.join(get_chat_folder_path(context.id), "chat.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(_serialize(context), f, ensure_ascii=False, default=str)
    return path


def remove_chat(ctxid: str) -> None:
    shutil.rmtree(get_chat_folder_path(ctxid), ignore_errors=True)
