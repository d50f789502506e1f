"""Token estimates for history and compaction: 1.1 x the cl100k_base count, offline only.
Counts with a compact counter (engine/cl100k.py: tiktoken's counts in ~3 MB instead of tiktoken's ~45 MB) built
from a locally available, verified cl100k file (litellm ships one), else a deterministic regex fallback."""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from a0nb.atomic_io import write_bytes
from a0nb.resources import user_home

__all__ = ["approximate_tokens", "raw_token_count", "fallback_token_count", "load_cl100k", "load_counter",
           "encoder_name", "TokenCounter"]

SAFETY_FACTOR = 1.1
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
# tiktoken deletes a cached file whose digest differs and downloads it again; checking first keeps us offline.
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CACHE_KEY = hashlib.sha1(_CL100K_URL.encode()).hexdigest()

# Pieces roughly where cl100k splits: contractions, letter runs, 1-3 digits, punctuation runs, spaces.
_PIECES = re.compile(r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d{1,3}| ?[^\w\s]+|\s+", re.IGNORECASE)


def fallback_token_count(text: str) -> int:
    """Deterministic cl100k-like count used when tiktoken or its data file is unavailable."""
    count = 0
    for piece in _PIECES.findall(text):
        word = piece.lstrip(" ")
        if not word or word.isspace():
            count += 1
        elif not word.isascii():
            count += len(word)  # non-Latin scripts cost about a token per character in cl100k
        elif len(word) > 6:
            count += math.ceil(len(word) / 4)
        else:
            count += 1
    return count


def _litellm_tokenizer_dir() -> Path | None:
    # find_spec locates the package without importing it (importing litellm takes seconds).
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"


def _cache_dir() -> Path | None:
    """The directory tiktoken will read, pointing it at litellm's bundled files when nothing is configured."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    bundled = _litellm_tokenizer_dir()
    if bundled is not None and (bundled / _CACHE_KEY).is_file():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)  # same thing litellm does when it is imported
        return bundled
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def load_cl100k() -> Any | None:
    """The tiktoken cl100k_base encoding if it can be built without the network, else None."""
    try:
        import tiktoken
    except ImportError:
        return None
    cached = _from_marshal(tiktoken)
    if cached is not None:
        return cached
    directory = _cache_dir()
    path = directory / _CACHE_KEY if directory is not None else None
    if path is None or not path.is_file():
        return None
    try:
        if hashlib.sha256(path.read_bytes()).hexdigest() != _CL100K_SHA256:
            return None
        encoding = tiktoken.get_encoding("cl100k_base")
    except Exception:  # a broken install must not break token counting; the fallback is deterministic
        return None
    _to_marshal(tiktoken)
    return encoding


def _marshal_path(tiktoken: Any) -> Path:
    version = getattr(tiktoken, "__version__", "0")
    return user_home() / "cache" / f"cl100k_base-{version}-{_CL100K_SHA256[:12]}.marshal"


def _from_marshal(tiktoken: Any) -> Any | None:
    """tiktoken parses the base64 rank file on every load (~90 ms of a ~150 ms load); a marshal copy of the
    parsed constructor arguments in $A0NB_HOME/cache loads in ~15 ms. Marshal runs no code, unlike pickle."""
    import marshal
    try:
        spec = marshal.loads(_marshal_path(tiktoken).read_bytes())
        return tiktoken.Encoding(**spec)
    except Exception:  # missing, from another Python, or damaged: rebuild from the rank file
        return None


def _to_marshal(tiktoken: Any) -> None:
    import marshal
    try:
        from tiktoken_ext.openai_public import cl100k_base
        spec = cl100k_base()  # reads the verified rank file once more: once per machine and tiktoken version
        path = _marshal_path(tiktoken)
        write_bytes(path, marshal.dumps(spec), "token cache")  # atomic: no half file, no .tmp left behind
    except Exception:  # a read-only home only costs the next process the slow load
        return


def _counter_path() -> Path:
    from a0nb.engine.cl100k import FORMAT
    return user_home() / "cache" / f"cl100k_count-{FORMAT}-{_CL100K_SHA256[:12]}.marshal"


def load_counter() -> Any | None:
    """The compact cl100k_base counter (`.count(text)`), from its cache in $A0NB_HOME/cache or built once from
    the verified rank file (~0.5 s); None when neither is there (no network is ever used)."""
    from a0nb.engine.cl100k import Cl100kCounter, build_table
    path = _counter_path()
    try:
        return Cl100kCounter.load(path)
    except Exception:  # missing, from another version, or damaged: rebuild from the rank file
        pass
    directory = _cache_dir()
    rank_file = directory / _CACHE_KEY if directory is not None else None
    if rank_file is None or not rank_file.is_file():
        return None
    try:
        data = rank_file.read_bytes()
        if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
            return None
        table = build_table(data)
        counter = Cl100kCounter(table)
    except Exception:  # a broken file must not break token counting; the fallback is deterministic
        return None
    import marshal
    try:
        write_bytes(path, marshal.dumps(table), "token cache")  # atomic: no half file, no .tmp left behind
    except Exception:  # a read-only home only costs the next process the build
        pass
    return counter


class _Encoder:
    """The process's one cl100k counter, loaded once: concurrent first users (a warm-up thread, the agent's
    loop) wait for the same load instead of each parsing the rank file. Process-wide, like the file it reads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded = False
        self.value: Any | None = None
        self.warming = False

    def get(self) -> Any | None:
        if self.loaded:
            return self.value
        with self.lock:
            if not self.loaded:
                self.value, self.loaded = load_counter(), True
        return self.value

    def warm(self) -> None:
        with self.lock:
            if self.loaded or self.warming:
                return
            self.warming = True
        threading.Thread(target=self.get, name="a0nb-tokens-warm", daemon=True).start()


_ENCODER = _Encoder()


def _encoder() -> Any | None:
    return _ENCODER.get()


def load_encoder() -> None:
    """Load the encoder now (on the calling thread); later counts reuse it."""
    _ENCODER.get()


def warm_in_background() -> None:
    """Load the encoder on a daemon thread so the first history count does not wait ~100 ms for it."""
    _ENCODER.warm()


def encoder_name() -> str:
    """Which counter approximate_tokens uses: "cl100k_base" or "fallback"."""
    return "cl100k_base" if _encoder() is not None else "fallback"


def raw_token_count(text: str) -> int:
    """cl100k_base token count (fallback estimate without tiktoken), without the safety factor."""
    encoder = _encoder()
    if encoder is None:
        return fallback_token_count(text)
    return int(encoder.count(text))


def approximate_tokens(text: str) -> int:
    """int(1.1 x cl100k_base count): the estimate used for every history budget decision."""
    if not text:
        return 0
    return int(SAFETY_FACTOR * raw_token_count(text))


class TokenCounter:
    """A token function with a bounded LRU cache; `fn` identifies the counting rule for per-message caches."""

    def __init__(self, fn: Callable[[str], int] = approximate_tokens, maxsize: int = 4096) -> None:
        self.fn = fn
        self.maxsize = maxsize
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()

    def count(self, text: str) -> int:
        # Keyed by (length, hash) so large tool outputs are not kept alive by the cache; str caches its hash.
        key = (len(text), hash(text))
        cache = self._cache
        hit = cache.get(key)
        if hit is not None:
            try:
                cache.move_to_end(key)
            except KeyError:  # evicted by another thread in between (a record's lazy count read by the inspector)
                pass
            return hit
        value = self.fn(text)
        cache[key] = value
        if len(cache) > self.maxsize:
            try:
                cache.popitem(last=False)
            except KeyError:  # (emptied by another thread meanwhile)
                pass
        return value

    def count_rendered(self, role: str, text: str) -> int:
        """`count(f"{role}: {text}")`: a history message as the model's context counts it (`Message.rendered`)."""
        return self.count(f"{role}: {text}")

    def clear(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        return f"TokenCounter(fn={getattr(self.fn, '__name__', self.fn)!r}, cached={len(self._cache)})"
