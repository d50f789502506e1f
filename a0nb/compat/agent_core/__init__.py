"""Crystal Lattice's `agent_core` import names for plugins written against it: `agent_core.types` holds the
four plugin base classes and `AgentCore` the registration and request API (a0nb's, from `a0nb.ext`)."""
from a0nb.ext import LatticeCore as AgentCore
from a0nb.ext import Session

__all__ = ["AgentCore", "Session"]
