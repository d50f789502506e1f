"""Agent Zero's older layout: `python.helpers.*` is the same package as `helpers.*`."""
from a0nb.compat import helpers

__all__ = ["helpers"]
