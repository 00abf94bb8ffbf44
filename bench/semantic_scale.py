"""python -m bench.semantic_scale: search by meaning at registry scale, without a database
load: the embedding rate of generated agents' texts (write time), the nearest-neighbour
search over N of their vectors (what the embedding service does per query), and the memory
of the service and of a web worker that asks it."""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from bench.generate import cards_generate
from bench.load import django_start

QUERIES = [
    "will it rain tomorrow",
    "turn speech into text",
    "book a table for four tonight",
    "pay my suppliers' bills",
    "translate a contract into German",
    "track my parcel",
    "summarize this report",
    "find security holes in my server",
    "plan a trip to Japan",
    "schedule a meeting with the team",
]


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def card_text(card: dict) -> str:
    parts = [card["name"], card.get("description", "")]
    for skill in card.get("skills", []):
        parts += [skill["name"], skill.get("description", ""), " ".join(skill.get("tags", []))]
    return ". ".join(p for p in parts if p)


def worker_rss() -> dict:
    """A process as a web worker is, asking the service: Django set up, discovery and the
    client imported; whether numpy (and the model) stay out of it."""
    code = (
        "import os, resource, sys; import django; django.setup();"
        "import registry.discovery.api, registry.discovery.hybrid, registry.semantic.client;"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'numpy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "SEMANTIC_SOCKET": "/nonexistent.sock"},
    ).stdout.split()
    return {"worker_max_rss_mib": round(float(out[0]), 1), "worker_imports_numpy": out[1] == "True"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic_scale", description=__doc__)
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        django_start(f"sqlite:///{tmp}/scale.sqlite3")
        import numpy as np

        from registry.semantic.embedder import embed, quantize
        from registry.semantic.index import VectorIndex

        result = {"agents": args.agents, "rss_before_model_mib": round(rss_mib(), 1)}
        result.update(worker_rss())
        texts = [card_text(c) for c in cards_generate(args.seed, 0, args.agents)]
        embed(texts[:10])
        result["rss_with_model_mib"] = round(rss_mib(), 1)
        began = time.perf_counter()
        blocks = [quantize(embed(texts[i : i + 1000])) for i in range(0, len(texts), 1000)]
        seconds = time.perf_counter() - began
        result["embed_per_second"] = round(len(texts) / seconds)
        vectors = [v for block in blocks for v in block]
        del blocks, texts
        index = VectorIndex()
        index.refresh = lambda covering=None: None  # the matrix is given here, not read
        index._ids = [uuid.uuid4() for _ in vectors]
        index._row = {pk.bytes: i for i, pk in enumerate(index._ids)}
        index._texts = [str(pk) for pk in index._ids]
        index._matrix = np.frombuffer(b"".join(vectors), dtype=np.int8).reshape(len(vectors), -1)
        del vectors
        result["rss_with_index_mib"] = round(rss_mib(), 1)
        result["matrix_mib"] = round(index._matrix.nbytes / 2**20, 1)
        for name, kwargs in (("all", {}), ("among 20000", {"among": index._ids[:20000]})):
            times = []
            for query in QUERIES * 3:
                index._remembered.clear()  # each search a scan, not a remembered answer
                began = time.perf_counter()
                index.nearest(query, 1000, floor=0.15, **kwargs)
                times.append(time.perf_counter() - began)
            result[f"nearest {name} ms median"] = round(statistics.median(times) * 1000, 2)
        result["service_max_rss_mib"] = round(rss_mib(), 1)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
