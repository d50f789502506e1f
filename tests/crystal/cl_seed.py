"""The Crystal Lattice seed's code examples, sliced out of the shared seeds at test time (never copied):
`block("EchoProvider")` is the example that defines that class, from its imports to the prose after it."""
from __future__ import annotations

import os
import re
from pathlib import Path

def _seeds() -> Path:
    """`$A0NB_SEEDS`, else the first `shared/seeds` above this file (CI clones beside a copy of shared/)."""
    if os.environ.get("A0NB_SEEDS"):
        return Path(os.environ["A0NB_SEEDS"])
    found = (parent / "shared" / "seeds" for parent in Path(__file__).resolve().parents)
    return next((p for p in found if p.is_dir()), Path("/work/shared/seeds"))


SEED = _seeds() / "004_970e0311f42ef1ea.txt"
_CODE_START = re.compile(r"(from |import |class |def |@|#|\s|$)")


def seed_text() -> str:
    return SEED.read_text(encoding="utf-8")


def block(class_name: str) -> str:
    """The example defining `class_name`: the import lines right above it, the class, up to the next prose line."""
    lines = seed_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"class {class_name}("))
    while start > 0 and (lines[start - 1].startswith(("from ", "import ")) or not lines[start - 1].strip()):
        start -= 1
    while not lines[start].strip():
        start += 1
    end = start + 1
    while end < len(lines) and (_CODE_START.match(lines[end]) and not _prose(lines[end])):
        end += 1
    return "\n".join(lines[start:end]).rstrip() + "\n"


def _prose(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(("from ", "import ", "class ", "def ", "@", "#"))


def with_ext_import(code: str) -> str:
    """The one change a0nb asks of a Crystal Lattice example: the import line."""
    changed = re.sub(r"^from agent_core\.types import", "from a0nb.ext import", code, flags=re.M)
    assert changed != code or "agent_core" not in code
    return changed


def registering_example() -> str:
    """The seed's "Registering Plugins" snippet (from `from agent_core import AgentCore` to `send_request`)."""
    text = seed_text()
    start = text.index("from agent_core import AgentCore")
    end = text.index("session, finals = core.send_request(session, config)") + len("session, finals = core.send_request(session, config)")
    return text[start:end] + "\n"


def with_optional_hooks(code: str) -> str:
    """The Calculator example with its commented-out `stream_tool` / `to_display_format` hooks switched on
    (the seed shows them as comments; uncommenting is the change the seed invites)."""
    lines = code.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("# Optional: provide streaming"))
    out = lines[:start + 1]
    for line in lines[start + 1:]:
        if line.startswith("    # "):
            out.append("    " + line[len("    # "):])
        elif line.rstrip() == "    #":
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"
