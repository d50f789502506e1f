"""Tallies for the reliability suite: inputs tried/held (corpus) and faults injected/survived, kept on the
pytest config and printed as one line each at the end of the session."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Iterator

import pytest


@dataclass
class Tally:
    """Counts of one kind of trial; `held` only grows when a trial's block ends without an exception."""

    tried: int = 0
    held: int = 0
    skipped: list[str] = field(default_factory=list)

    @contextlib.contextmanager
    def trial(self, count: int = 1) -> Iterator[None]:
        self.tried += count
        yield
        self.held += count


@dataclass
class Tallies:
    corpus: Tally = field(default_factory=Tally)
    faults: Tally = field(default_factory=Tally)


_KEY = pytest.StashKey[Tallies]()


def _tallies(config: pytest.Config) -> Tallies:
    if _KEY not in config.stash:
        config.stash[_KEY] = Tallies()
    return config.stash[_KEY]


@pytest.fixture
def corpus_tally(request: pytest.FixtureRequest) -> Tally:
    return _tallies(request.config).corpus


@pytest.fixture
def fault_tally(request: pytest.FixtureRequest) -> Tally:
    return _tallies(request.config).faults


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    tallies = config.stash.get(_KEY, None)
    if tallies is None:
        return
    corpus, faults = tallies.corpus, tallies.faults
    if corpus.tried or corpus.skipped:
        gaps = f" ({len(corpus.skipped)} known gaps skipped: {', '.join(corpus.skipped)})" if corpus.skipped else ""
        terminalreporter.write_line(f"corpus: {corpus.tried} inputs tried, {corpus.held} held{gaps}")
    if faults.tried:
        terminalreporter.write_line(f"faults: {faults.tried} injected, {faults.held} survived")
