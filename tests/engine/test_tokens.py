"""Token estimates: the cl100k x 1.1 rule, the offline loader, the fallback and the counter cache."""
from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from a0nb.engine import tokens
from a0nb.engine.tokens import (TokenCounter, approximate_tokens, encoder_name, fallback_token_count, load_cl100k,
                         raw_token_count)

CL100K = load_cl100k()
needs_cl100k = pytest.mark.skipif(CL100K is None, reason="tiktoken cl100k_base file not available offline")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@needs_cl100k
def test_ai_hello_is_1_1_times_cl100k() -> None:
    # reference §8.3 item 21
    expected = int(1.1 * len(CL100K.encode("ai: hello")))
    assert approximate_tokens("ai: hello") == expected
    assert encoder_name() == "cl100k_base"


@needs_cl100k
@pytest.mark.parametrize("text", ["Hello, world!", '{"tool_name": "code_execution", "tool_args": {}}',
                                  "ünïcödé 日本語 text", "x" * 5000, "<|endoftext|> is plain text here"])
def test_raw_count_matches_tiktoken(text: str) -> None:
    assert raw_token_count(text) == len(CL100K.encode_ordinary(text))
    assert approximate_tokens(text) == int(1.1 * len(CL100K.encode_ordinary(text)))


def test_empty_text_is_zero_tokens() -> None:
    assert approximate_tokens("") == 0
    assert fallback_token_count("") == 0


def test_fallback_is_deterministic_and_word_based() -> None:
    assert fallback_token_count("hello world") == 2
    assert fallback_token_count("ai: hello") == 3
    assert fallback_token_count("abcdefghijklmnop") == 4  # long words split every 4 characters
    assert fallback_token_count("日本語") == 3
    assert fallback_token_count("1234567") == 3  # digits in groups of three
    text = "The quick brown fox jumps over the lazy dog. " * 20
    assert fallback_token_count(text) == fallback_token_count(text)


@needs_cl100k
def test_fallback_stays_near_cl100k_on_ordinary_text() -> None:
    samples = ["The agent reads the file, runs the tests and reports which ones failed and why.",
               '{"thoughts": ["check the log"], "tool_name": "code_execution", "tool_args": {"code": "ls -la"}}',
               "def compact(history, settings):\n    return history.tokens() <= settings.budget\n" * 3]
    for text in samples:
        ratio = fallback_token_count(text) / len(CL100K.encode_ordinary(text))
        assert 0.6 < ratio < 1.6, (text, ratio)


def test_loader_stays_offline_when_the_file_is_missing(tmp_path, monkeypatch, no_network) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert load_cl100k() is None


def test_loader_rejects_a_corrupt_file_without_downloading(tmp_path, monkeypatch, no_network) -> None:
    bad = tmp_path / tokens._CACHE_KEY
    bad.write_bytes(b"not a rank file\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert load_cl100k() is None
    assert bad.exists()  # tiktoken would have deleted it and fetched a new one


def test_empty_cache_dir_setting_means_no_tiktoken(monkeypatch, no_network) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert load_cl100k() is None


@needs_cl100k
def test_loader_finds_litellm_bundled_file(monkeypatch, no_network) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    bundled = tokens._litellm_tokenizer_dir()
    if bundled is None or not (bundled / tokens._CACHE_KEY).is_file():
        pytest.skip("litellm's bundled tokenizer file is not installed")
    assert load_cl100k() is not None


def test_counter_caches_and_evicts() -> None:
    calls: list[str] = []

    def fn(text: str) -> int:
        calls.append(text)
        return len(text)

    counter = TokenCounter(fn, maxsize=2)
    assert counter.count("aa") == 2 and counter.count("aa") == 2
    assert calls == ["aa"]
    counter.count("bbb")
    counter.count("aa")       # refreshes "aa"
    counter.count("cccc")     # evicts "bbb", the least recently used
    counter.count("aa")
    assert calls == ["aa", "bbb", "cccc"]
    counter.count("bbb")
    assert calls[-1] == "bbb"
    counter.clear()
    counter.count("aa")
    assert calls[-1] == "aa"


def test_counter_entry_evicted_by_another_thread_is_no_error() -> None:
    """A record's history parts are counted when first read, which may be on the kernel's thread while the loop's
    thread counts with the same counter: an entry evicted between one thread's lookup and its reordering (here,
    by the cache itself as it is read) is no error, and the count is still right."""
    from collections import OrderedDict

    class EvictedOnRead(OrderedDict):  # type: ignore[type-arg]
        def get(self, key: object, default: object = None) -> object:
            value = super().get(key, default)
            self.pop(key, None)  # (what another thread's insert does at that moment once the cache is full)
            return value

    counter = TokenCounter(len, maxsize=2)
    counter._cache = EvictedOnRead()
    assert counter.count("abc") == 3 and counter.count("abc") == 3  # the second: a hit whose entry is gone


def test_default_counter_uses_approximate_tokens() -> None:
    counter = TokenCounter()
    assert counter.fn is approximate_tokens
    assert counter.count("ai: hello") == approximate_tokens("ai: hello")


def test_importing_history_modules_is_cheap() -> None:
    code = ("import sys, a0nb.engine.tokens, a0nb.engine.history, a0nb.engine.compaction; "
            "heavy = [m for m in ('litellm', 'tiktoken', 'IPython', 'ipywidgets') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_cl100k
def test_parsed_ranks_are_kept_in_a_marshal_cache(monkeypatch, no_network) -> None:
    import tiktoken
    original = tiktoken.get_encoding
    first = load_cl100k()  # builds from the rank file and writes $A0NB_HOME/cache/cl100k_base-*.marshal
    cached = tokens._marshal_path(tiktoken)
    assert first is not None and cached.is_file()

    def refuse(name: str) -> None:
        raise AssertionError("the rank file was parsed again")
    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    second = load_cl100k()
    text = "Ünïcode, code `x = 17 * 23` and <|endoftext|> as plain text"
    assert second is not None and second.name == "cl100k_base"
    assert second.encode_ordinary(text) == first.encode_ordinary(text) == CL100K.encode_ordinary(text)

    cached.write_bytes(b"damaged")
    monkeypatch.setattr(tiktoken, "get_encoding", original)
    assert load_cl100k() is not None  # a damaged cache is rebuilt from the rank file
    assert tokens._from_marshal(tiktoken) is not None
