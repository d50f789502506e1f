"""Prints the corpus tally (`N/M compatible`) at the end of the session, with the failing files."""
from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    from test_upstream_corpus import _KEY  # type: ignore[import-not-found]
    verdicts = config.stash.get(_KEY, [])
    if not verdicts:
        return
    ok = sum(v.ok for v in verdicts)
    terminalreporter.write_line(f"Agent Zero upstream corpus: {ok}/{len(verdicts)} compatible")
    for v in verdicts:
        if not v.ok:
            terminalreporter.write_line(f"  {v}")
