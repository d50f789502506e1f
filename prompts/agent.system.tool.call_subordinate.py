"""Variables for agent.system.tool.call_subordinate.md.

Owns the `profiles` text: one bullet per profile the calling agent can hand work to.
"""

from __future__ import annotations

from typing import Any

from a0nb.ext import VariablesPlugin

NO_PROFILES = "- no other profiles"


class SubordinateProfiles(VariablesPlugin):
    """Lists the profiles a superior can choose from when delegating."""

    files_only = True  # the profiles come from the agent's files

    def get_variables(
        self, file: str = "", backup_dirs: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        agent = kwargs.get("_agent")
        memo = getattr(getattr(agent, "hierarchy", None), "memo", None)
        if callable(memo):  # the profiles come from the hierarchy: so does the text, until it changes
            return {"profiles": memo(("subordinate profile lines",), lambda: profile_lines(agent))}
        return {"profiles": profile_lines(agent)}


def profile_lines(agent: Any) -> str:
    """Render `agent.profiles()` as markdown bullets; any agent without it gets a placeholder."""
    # Agents built without a profile registry (tests, bare API use) still render a valid prompt.
    listing = getattr(agent, "profiles", None)
    if not callable(listing):
        return NO_PROFILES
    profiles = listing() or {}
    lines = [_bullet(name, profile) for name, profile in sorted(profiles.items())]
    return "\n".join(lines) or NO_PROFILES


def _bullet(name: str, profile: Any) -> str:
    title = str(getattr(profile, "title", "") or "").strip()
    description = " ".join(str(getattr(profile, "description", "") or "").split())
    text = f"- `{name}`"
    if title:
        text += f": {title}"
    if description:
        text += f" — {description}"
    return text
