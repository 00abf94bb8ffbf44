"""The embedding model: WordLlama's 256-dimension static model (``l2_supercat``), whose
weights and tokenizer ship inside the installed ``wordllama`` package. It is loaded from
there with downloads disabled: nothing here reaches a model hub. (WordLlama 0.4 looks for
its tokenizer under ``wordllama/tokenizer/`` while the package holds
``wordllama/tokenizers/``; its cache directory, set to the package itself, finds it.)

A query is embedded lower-cased (the tokenizer tells "ZORBLAX" from "zorblax" where keyword
search does not), so its case changes nothing; an agent's text (``embed_stored``) as it is
written and lower-cased, both: the query's words meet their own lower-case tokens, and a
name in capitals keeps what the model learned of it ("French", "Google": lower-cased alone,
the paraphrases of bench/semantic_set.json lost 0.009 nDCG@10, with both they gained 0.013).
``TEXT_VERSION`` names that, and how an agent's text is weighed (registry/semantic/text.py),
in the model name stored with each vector, so a change of either leaves the old vectors
unread until ``manage.py embeddings_rebuild`` (or its job, for the vectors missing).

Vectors are unit length, quantized to one signed byte per dimension (``quantize``): the
dot product of two of them, over 127², is their cosine within about 1 %."""

import threading
from array import array
from functools import cache

MODEL_CONFIG = "l2_supercat"
DIMENSIONS = 256
SCALE = 127
TEXT_VERSION = "lower1"
_lock = threading.Lock()


@cache
def model_name() -> str:
    """The model's name and version, stored with each vector."""
    from importlib.metadata import version

    return f"wordllama-{MODEL_CONFIG}-{DIMENSIONS}@{version('wordllama')}+{TEXT_VERSION}"


@cache
def model():
    from pathlib import Path

    import wordllama
    from wordllama import WordLlama

    with _lock:
        loaded = WordLlama.load(
            MODEL_CONFIG,
            cache_dir=Path(wordllama.__file__).parent,
            dim=DIMENSIONS,
            disable_download=True,
        )
        # embed() pools each text's own tokens: no padding to the batch's longest.
        loaded.tokenizer.no_padding()
        return loaded


def embed(texts: list[str], *, stored: bool = False):
    """The unit vectors (float32, one row per text) of ``texts``: the mean of each text's
    token vectors, normalized, as WordLlama's own ``embed`` makes them, without padding
    every text of a batch to the longest (which made a bulk load's long cards slow). Each
    text lower-cased (a query), or with ``stored`` as written and lower-cased (an agent's)."""
    import numpy as np

    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    if not texts:
        return vectors
    loaded = model()
    table = loaded.embedding
    texts = [f"{text}\n{text.lower()}" if stored else text.lower() for text in texts]
    for row, encoded in enumerate(loaded.tokenizer.encode_batch(texts, add_special_tokens=False)):
        if encoded.ids:
            ids = np.clip(np.asarray(encoded.ids, dtype=np.int64), 0, table.shape[0] - 1)
            vectors[row] = table[ids].sum(axis=0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # A text of no known word has no direction: it stays zeros, near nothing.
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


def quantize(vectors) -> list[bytes]:
    import numpy as np

    return [
        row.tobytes() for row in np.clip(np.rint(vectors * SCALE), -SCALE, SCALE).astype(np.int8)
    ]


def embed_quantized(texts: list[str]) -> list[bytes]:
    return quantize(embed(texts))


def embed_stored(texts: list[str]) -> list[bytes]:
    """The quantized vectors of agents' texts, as stored (``embed``'s ``stored``)."""
    return quantize(embed(texts, stored=True))


def vector_weighed(vector: bytes, weight: float) -> bytes:
    """A quantized vector scaled by ``weight`` (0 to 1): its dot products, and so the
    cosines a search reads, scaled alike (without numpy: a web worker calls it)."""
    if weight >= 1.0:
        return vector
    scaled = (round(value * weight) for value in array("b", vector))
    return array("b", scaled).tobytes()


def cosine_of(dot: int) -> float:
    """The cosine of two quantized vectors from their byte dot product: the same float in
    every process (the index's and a worker's, which reads the service's integers)."""
    return dot / (SCALE * SCALE)
