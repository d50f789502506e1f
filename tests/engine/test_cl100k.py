"""The compact cl100k counter (engine/cl100k.py) counts exactly what tiktoken's encode_ordinary counts: on the
repository's own text, on random text across scripts, spaces and contractions, on a sample of every Unicode
plane, and on lone surrogates; its table is cached and a damaged cache is rebuilt; counting loads no tiktoken."""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from a0nb.engine import tokens
from a0nb.engine.cl100k import Cl100kCounter

CL100K = tokens.load_cl100k()
COUNTER = tokens.load_counter()
pytestmark = pytest.mark.skipif(CL100K is None or COUNTER is None,
                                reason="tiktoken cl100k_base file not available offline")
REPO = Path(__file__).resolve().parents[2]


def _same(text: str) -> None:
    assert COUNTER.count(text) == len(CL100K.encode_ordinary(text)), repr(text)


def test_counts_equal_tiktoken_on_the_repository_text() -> None:
    files = sorted(REPO.glob("prompts/*.md"))[:60] + sorted(REPO.glob("a0nb/engine/*.py"))[:40]
    assert files
    for path in files:
        _same(path.read_text(encoding="utf-8"))


def test_counts_equal_tiktoken_on_random_text() -> None:
    rnd = random.Random(23)
    alphabet = list("  \t\n\r'sdmtSDMTlLvVrReE0123456789.,;:!?-_()[]{}\"`~@#$%^&*+=<>/\\|") + [
        "é", "ß", "日", "語", "한", "ア", "ـ", "ع", "\u00a0", "\u2003", "\u3000", "\u0085", "\u2028", "\x1c", "\x1f",
        "ſ", "\u212a", "\U0001F600", "\U0001D400", "\U00010400", "\U00020000", "\u0301", "\u200d", "\ufeff", "²",
        "½", "Ⅷ", "٣", "\U00011f04", "\U000105c9", "\U00018f14", "\U00031350"]
    for _ in range(3000):
        n = rnd.randint(1, 30)
        _same("".join(rnd.choice(alphabet) if rnd.random() < 0.8 else chr(rnd.randint(0x20, 0x3FFFF))
                      for _ in range(n)).encode("utf-8", "replace").decode("utf-8", "replace"))


def test_counts_equal_tiktoken_on_random_ascii_text() -> None:
    # ASCII text takes a faster pattern with ASCII classes
    rnd = random.Random(17)
    common = list("  \t\n\r'sdmtSDMTlLvVrReExyz0123456789.,;:!?-_()[]{}\"`") + ["'s", "'LL", "'ve", "\r\n", "  \n"]
    for _ in range(3000):
        n = rnd.randint(1, 30)
        text = "".join(rnd.choice(common) if rnd.random() < 0.8 else chr(rnd.randint(0, 0x7F)) for _ in range(n))
        assert text.isascii()
        _same(text)


def test_letters_and_numbers_across_unicode_match_tiktoken() -> None:
    # "<c>'s" splits differently for a letter or number than for anything else
    for cp in range(0x80, 0x3FFFF, 37):
        if not 0xD800 <= cp <= 0xDFFF:
            c = chr(cp)
            _same(c + "'s")
            _same("a" + c + "12345 " + c)


def test_edges() -> None:
    for text in ["", " ", "   ", "a  ", "hello \n\n  world  ", "x\r\n\r\ny", "I'm you'RE we'Ve", "12345678",
                 "<|endoftext|> plain", "\t\t", "a" * 3000, "ab" * 999, "🙂" * 40, "tab\there", " \u00a0 x"]:
        _same(text)
    # lone surrogates count as tiktoken counts them (each one U+FFFD)
    for text in ["\ud800", "a\udc00b", "x \ud83d"]:
        assert COUNTER.count(text) == len(CL100K.encode_ordinary(text))


def test_the_table_is_cached_and_a_damaged_cache_is_rebuilt(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("A0NB_HOME", str(tmp_path))
    first = tokens.load_counter()
    cached = tokens._counter_path()
    assert first is not None and cached.is_file()
    assert isinstance(Cl100kCounter.load(cached), Cl100kCounter)
    cached.write_bytes(b"damaged")
    again = tokens.load_counter()
    assert again is not None and again.count("hello world") == 2
    assert Cl100kCounter.load(cached).count("hello world") == 2


def test_counting_does_not_load_tiktoken() -> None:
    code = ("import sys; from a0nb.engine import tokens; n = tokens.raw_token_count('hello world'); "
            "assert tokens.encoder_name() == 'cl100k_base' and n == 2, n; "
            "assert 'tiktoken' not in sys.modules and 'regex' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_long_pieces_merge_as_tiktoken_merges() -> None:
    # pieces over _LONG_PIECE bytes take the heap merge: the same merges in the same order as the pair scan
    rnd = random.Random(51)
    alphabet = list("}{ab  xx..;;éé日日=") + ["\U0001F600"]
    for _ in range(400):
        _same("".join(rnd.choice(alphabet) for _ in range(rnd.randint(60, 600))))
    for text in ["}" * 5000, '{"text": "' + "}" * 20_000, "a" * 3001, "!?" * 2000, " " + "=" * 999, "😀" * 700]:
        _same(text)
