"""Done means for issue 17: every file of the real Agent Zero corpus (`../shared/a0-upstream/`), placed
where an Agent Zero user puts it, imported AND ran in one scripted turn; prints `N/M compatible`.

A file listed as not compatible in docs/agent-zero-compat.md is a strict xfail (so the list must shrink
when a file starts to work); every other file must be compatible."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import Verdict, find_corpus, judge, load_manifest  # noqa: E402

CORPUS = find_corpus()
ENTRIES = load_manifest(CORPUS) if CORPUS else []
DOC = Path(__file__).resolve().parents[2] / "docs" / "agent-zero-compat.md"
TARGET = 0.90


def known_gaps() -> set[str]:
    """Corpus paths the doc's "Not compatible" table lists (first column, in backticks)."""
    if not DOC.exists():
        return set()
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Corpus files that are not compatible", 1)
    if len(section) < 2:
        return set()
    body = section[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\|\s*`([^`]+)`", body, re.M))


GAPS = known_gaps()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="the upstream corpus (shared/a0-upstream) is not here")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    return {}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["path"] for e in ENTRIES])
def test_corpus_file(entry: dict, tmp_path: Path, verdicts: dict[str, Verdict], request: pytest.FixtureRequest) -> None:
    nb = tmp_path / "nb"
    nb.mkdir()
    assert CORPUS is not None
    verdict = judge(CORPUS, entry, nb)
    verdicts[entry["path"]] = verdict
    _store(request.config, verdict)
    if entry["path"] in GAPS:
        if verdict.ok:
            pytest.fail(f"{entry['path']} is compatible now: remove it from the not-compatible list in {DOC.name}")
        pytest.xfail(verdict.reason)
    assert verdict.ok, verdict.reason


def test_documented_gaps_are_corpus_files() -> None:
    paths = {e["path"] for e in ENTRIES}
    assert GAPS <= paths, f"{DOC.name} lists files that are not in the corpus: {sorted(GAPS - paths)}"


_KEY = pytest.StashKey[list]()


def _store(config: pytest.Config, verdict: Verdict) -> None:
    config.stash.setdefault(_KEY, []).append(verdict)


def pytest_terminal_summary(terminalreporter, config) -> None:  # pragma: no cover - used via conftest
    pass
