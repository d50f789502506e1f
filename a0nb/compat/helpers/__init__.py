"""Agent Zero's `helpers` package, answered by a0nb (one module per upstream module name)."""
