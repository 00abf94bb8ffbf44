"""The embedding model loads from the installed package, with no network at all."""

import socket

import numpy as np
import pytest

from registry.semantic import embedder


@pytest.fixture
def no_network(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    monkeypatch.setattr(socket, "getaddrinfo", refused)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder.model.cache_clear()
    yield
    embedder.model.cache_clear()


def test_the_model_loads_from_the_installed_package_with_no_network(no_network):
    vectors = embedder.embed(
        ["turn speech into text", "audio transcription", "restaurant reservations"]
    )
    assert vectors.shape == (3, embedder.DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # Words in common: none; meaning: the first two.
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_the_stored_model_name_says_which_model_and_version():
    assert embedder.model_name().startswith("wordllama-l2_supercat-256@0.4")


def test_a_text_of_unknown_words_only_embeds_to_no_direction():
    assert not embedder.embed([""])[0].any()
    assert len(embedder.embed_quantized(["a text"])[0]) == embedder.DIMENSIONS
