"""The embedding model: WordLlama's 256-dimension static model (``l2_supercat``), whose
weights and tokenizer ship inside the installed ``wordllama`` package. It is loaded from
there with downloads disabled: nothing here reaches a model hub. (WordLlama 0.4 looks for
its tokenizer under ``wordllama/tokenizer/`` while the package holds
``wordllama/tokenizers/``; its cache directory, set to the package itself, finds it.)

Vectors are unit length, quantized to one signed byte per dimension (``quantize``): the
dot product of two of them, over 127², is their cosine within about 1 %."""

import threading
from functools import cache

MODEL_CONFIG = "l2_supercat"
DIMENSIONS = 256
SCALE = 127
_lock = threading.Lock()


@cache
def model_name() -> str:
    """The model's name and version, stored with each vector."""
    from importlib.metadata import version

    return f"wordllama-{MODEL_CONFIG}-{DIMENSIONS}@{version('wordllama')}"


@cache
def model():
    from pathlib import Path

    import wordllama
    from wordllama import WordLlama

    with _lock:
        return WordLlama.load(
            MODEL_CONFIG,
            cache_dir=Path(wordllama.__file__).parent,
            dim=DIMENSIONS,
            disable_download=True,
        )


def embed(texts: list[str]):
    """The unit vectors (float32, one row per text) of ``texts``."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        vectors = model().embed(texts, norm=True).astype(np.float32)
    # An empty text (or one of unknown words only) embeds to zeros: no direction, no match.
    return np.nan_to_num(vectors)


def quantize(vectors) -> list[bytes]:
    import numpy as np

    return [
        row.tobytes() for row in np.clip(np.rint(vectors * SCALE), -SCALE, SCALE).astype(np.int8)
    ]


def embed_quantized(texts: list[str]) -> list[bytes]:
    return quantize(embed(texts))
