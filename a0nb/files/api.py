"""Module-level helpers for scripts and the CLI: the resolved hierarchy and prompt rendering."""
from __future__ import annotations

from pathlib import Path

from a0nb.diagnostics import Diagnostics
from a0nb.files.hierarchy import Hierarchy
from a0nb.files.roots import Root
from a0nb.files.prompts import PromptEngine, Rendered, prompt_dirs


def paths(workdir: str | Path = ".", profile: str = "default") -> list[Root]:
    """The search hierarchy for a notebook folder and profile, highest priority first."""
    return list(Hierarchy(workdir, profile).roots)


def render_prompt(name: str = "agent.system.main.md", workdir: str | Path = ".", profile: str = "default",
                  **variables: object) -> Rendered:
    """Render one prompt file through the hierarchy (no agent: variables loaders get `_agent=None`)."""
    diagnostics = Diagnostics()
    hierarchy = Hierarchy(workdir, profile, diagnostics=diagnostics)
    return PromptEngine(prompt_dirs(hierarchy.roots), diagnostics).render(name, **variables)
