"""The embedders behind recall search: deterministic hashing, and MiniLM matching its reference scores."""

from __future__ import annotations

import numpy as np

from streams.embeddings import HashingEmbedder, get_embedder
from streams.minilm import MiniLMEmbedder
from streams.reader.observation_vectors import vector_id


def test_hashing_embedder_is_deterministic_unit_length_and_word_based() -> None:
    embedder = HashingEmbedder(64)
    a, b, c = (np.array(v) for v in embedder.embed(["Billing database", "billing  DATABASE", "dark theme"]))

    assert embedder.dimension == len(a) == 64 and abs(np.linalg.norm(a) - 1) < 1e-6
    assert np.allclose(a, b) and float(a @ c) < 0.9
    assert get_embedder("hashing-64").embed(["x"]) == embedder.embed(["x"])


def test_minilm_reproduces_the_published_all_minilm_l6_v2_similarities() -> None:
    # Scores from the sentence-transformers documentation for this model.
    embedder = MiniLMEmbedder()
    v = np.array(embedder.embed([
        "The new movie is awesome", "The new movie is so great",
        "The cat sits outside", "The dog plays in the garden",
    ]))

    assert v.shape == (4, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert round(float(v[0] @ v[1]), 4) == 0.8939
    assert round(float(v[2] @ v[3]), 4) == 0.2838


def test_vector_ids_are_deterministic_per_resource_thread_group_and_chunk() -> None:
    first = vector_id("r", "t", "g", 0)

    assert first == vector_id("r", "t", "g", 0) and first.version == 8
    assert len({first, vector_id("r", "t", "g", 1), vector_id("r2", "t", "g", 0), vector_id("r", "t2", "g", 0)}) == 4
