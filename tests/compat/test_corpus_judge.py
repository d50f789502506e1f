"""The corpus judge is not lenient: a file whose code raised (even where a0nb reports the failure as one
line instead of failing the turn) or that a0nb never invoked at its own point is not compatible."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus_judge import judge  # noqa: E402

RAISES_AT_BANNERS = '''
from helpers.extension import Extension


class Broken(Extension):
    async def execute(self, banners: list = [], **kwargs):
        return self.helper(banners)

    def helper(self, banners):
        raise KeyError("no such banner source")
'''

GOOD_AT_BANNERS = RAISES_AT_BANNERS.replace('raise KeyError("no such banner source")', 'banners.append({"title": "ok"})')

CALLED_ELSEWHERE = '''
from helpers.extension import Extension


def helper():
    return "called by its neighbour, not by a0nb at the point"


class Quiet(Extension):
    async def execute(self, **kwargs):
        return None
'''

NEIGHBOUR = '''
from helpers.extension import Extension
from extensions.python.monologue_start._10_quiet import helper


class Neighbour(Extension):
    async def execute(self, **kwargs):
        helper()
'''


def _entry(tmp: Path, rel: str, text: str, point: str) -> dict:
    (tmp / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp / "corpus" / rel).write_text(text, encoding="utf-8")
    return {"path": rel, "kind": "extension", "point": point, "place": rel.replace("extensions/python/", "extensions/")}


def test_an_exception_a0nb_only_reports_is_still_a_failure(tmp_path: Path) -> None:
    entry = _entry(tmp_path, "extensions/python/banners/_10_broken.py", RAISES_AT_BANNERS, "banners")
    (tmp_path / "nb").mkdir()
    verdict = judge(tmp_path / "corpus", entry, tmp_path / "nb")
    assert not verdict.ok and "escaped from helper: KeyError" in verdict.reason


def test_the_same_file_without_the_error_passes(tmp_path: Path) -> None:
    entry = _entry(tmp_path, "extensions/python/banners/_10_ok.py", GOOD_AT_BANNERS, "banners")
    (tmp_path / "nb").mkdir()
    assert judge(tmp_path / "corpus", entry, tmp_path / "nb").ok


def test_a_file_called_only_by_another_file_did_not_run_at_its_point(tmp_path: Path) -> None:
    # the file runs at monologue_start, but is judged for message_loop_start, where a neighbour calls it
    entry = _entry(tmp_path, "extensions/python/monologue_start/_10_quiet.py", CALLED_ELSEWHERE, "message_loop_start")
    nb = tmp_path / "nb"
    (nb / "extensions" / "message_loop_start").mkdir(parents=True)
    (nb / "extensions" / "message_loop_start" / "_20_neighbour.py").write_text(NEIGHBOUR, encoding="utf-8")
    verdict = judge(tmp_path / "corpus", entry, nb)
    assert not verdict.ok and "never ran it at point message_loop_start" in verdict.reason
