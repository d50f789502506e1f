"""`python -m a0nb ...`: the command line (see `a0nb.cli`)."""
from __future__ import annotations

from a0nb.cli import main

raise SystemExit(main())
