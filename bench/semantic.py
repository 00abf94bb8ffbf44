"""python -m bench.semantic: the quality of text search by mode (keyword, semantic, hybrid)
on the labelled set of bench/semantic_set.py, and what embedding at write time costs.

A fresh database (SQLite in a temporary directory unless --database-url) gets --distractors
generated cards (bench/generate.py) and the set's agents and entities; each query is asked
of discovery as ``GET /discover/agents?q=...&mode=...`` asks it, and the first 10 answers
scored: recall@10 (the share of its relevant agents found) and nDCG@10 (binary gains).
The load is timed twice, once without the vectors written (``--distractors`` cards each)."""

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import semantic_set
from bench.generate import cards_generate
from bench.load import OWNER, database_migrate, django_start

MODES = ("keyword", "semantic", "hybrid")
K = 10
WORD = re.compile(r"[a-z0-9]+")
STOP = {
    "a",
    "an",
    "the",
    "to",
    "of",
    "for",
    "in",
    "on",
    "my",
    "is",
    "i",
    "me",
    "this",
    "and",
    "what",
    "how",
    "with",
    "when",
    "at",
    "be",
    "can",
    "do",
    "our",
    "we",
    "it",
    "from",
    "by",
    "are",
    "should",
    "will",
    "would",
    "much",
    "many",
    "where",
    "which",
    "someone",
    "near",
}


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def set_load(distractors: int, seed: int) -> tuple[dict, dict]:
    """Load the population; {key: agent id} and the load timings."""
    from protocols.a2a.registration.bulk import cards_bulk_import
    from registry.agents import services
    from registry.agents.services import AgentInput, CapabilityInput
    from registry.semantic.vectors import vectors_on_write
    from registry.signals import agents_written

    timings = {}
    half = distractors // 2
    # The same kind of cards, with and without the vectors written (the receiver off).
    agents_written.disconnect(dispatch_uid="semantic-vectors")
    began = time.perf_counter()
    cards_bulk_import(owner=OWNER, cards=list(cards_generate(seed, 0, half)))
    timings["load_without_vectors_s"] = time.perf_counter() - began
    spent = []

    def timed(sender, agent_ids, **kwargs):
        began = time.perf_counter()
        vectors_on_write(sender, agent_ids, **kwargs)
        spent.append(time.perf_counter() - began)

    agents_written.connect(timed, dispatch_uid="semantic-vectors", weak=False)
    began = time.perf_counter()
    cards_bulk_import(owner=OWNER, cards=list(cards_generate(seed, half, 2 * half)))
    timings["load_with_vectors_s"] = time.perf_counter() - began
    # What the vectors add to the same load: the receiver's own time over the rest of it.
    timings["vectors_s"] = sum(spent)
    timings["cards_per_phase"] = half
    keys = {}
    for key, (name, description, skills) in semantic_set.AGENTS.items():
        data = AgentInput(
            name=name,
            description=description,
            capabilities=[CapabilityInput(name=n, description=d, tags=t) for n, d, t in skills],
        )
        keys[key] = services.agent_create(owner=OWNER, data=data).id
    for key, (name, category, description, capabilities) in semantic_set.ENTITIES.items():
        data = AgentInput(
            name=name,
            description=description,
            capabilities=[CapabilityInput(name=c, tags=[category]) for c in capabilities],
        )
        keys[key] = services.agent_create(owner=OWNER, data=data).id
    return keys, timings


def ask(text: str, mode: str) -> list:
    from registry.agents import selectors
    from registry.discovery import discover as discovery
    from registry.discovery.query import query_parse

    query = query_parse({"q": text, "mode": mode, "limit": str(K)})
    agents = discovery.query_agents(query, selectors.agent_discoverable_queryset())
    page, _, _ = discovery.discover(agents, query, full_rows=None)
    return page.rows


def scores(found: list, relevant: set) -> tuple[float, float]:
    if not relevant:  # a made-up word: right when nothing is found
        return (0.0, 0.0) if found else (1.0, 1.0)
    hits = [1 if pk in relevant else 0 for pk in found[:K]]
    recall = sum(hits) / len(relevant)
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(K, len(relevant))))
    return recall, dcg / ideal


def evaluate(keys: dict) -> dict:
    texts = {}
    for key, (name, description, skills) in semantic_set.AGENTS.items():
        texts[key] = " ".join(
            [name, description, *(f"{n} {d} {' '.join(t)}" for n, d, t in skills)]
        )
    for key, (name, category, description, caps) in semantic_set.ENTITIES.items():
        texts[key] = " ".join([name, category, description, *caps])
    rows, seconds = [], {mode: [] for mode in MODES}
    for text, relevant_keys, kind in semantic_set.QUERIES:
        relevant = {keys[k] for k in relevant_keys}
        shared = any(_words(text) & _words(texts[k]) for k in relevant_keys)
        row = {"query": text, "kind": kind, "sharesWord": shared}
        for mode in MODES:
            began = time.perf_counter()
            found = ask(text, mode)
            seconds[mode].append(time.perf_counter() - began)
            row[mode] = scores(found, relevant)
        rows.append(row)
    well = [r for r in rows if r["keyword"][0] >= 0.999 and r["kind"] != "made-up word"]
    kinds = sorted({r["kind"] for r in rows})

    def mean(subset, mode, at):
        return round(statistics.fmean(r[mode][at] for r in subset), 3) if subset else None

    summary = {}
    for name, subset in (
        ("all", rows),
        ("no shared word", [r for r in rows if not r["sharesWord"]]),
        ("keyword answers well", well),
        *((f"kind: {kind}", [r for r in rows if r["kind"] == kind]) for kind in kinds),
    ):
        summary[name] = {
            "queries": len(subset),
            **{f"{m} recall@10": mean(subset, m, 0) for m in MODES},
            **{f"{m} nDCG@10": mean(subset, m, 1) for m in MODES},
        }
    return {
        "summary": summary,
        "latency_ms_median": {m: round(statistics.median(s) * 1000, 2) for m, s in seconds.items()},
        "misses": {m: [r["query"] for r in rows if r[m][0] == 0] for m in ("semantic", "hybrid")},
        "queries": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.semantic", description=__doc__)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--distractors", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "semantic_results.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        django_start(args.database_url or f"sqlite:///{tmp}/bench.sqlite3")
        database_migrate()
        keys, timings = set_load(args.distractors, args.seed)
        from registry.agents.models import Agent

        result = {"agents": Agent.objects.count(), "labelled": len(keys), **timings}
        result["load_cost_with_vectors"] = round(
            timings["vectors_s"] / (timings["load_with_vectors_s"] - timings["vectors_s"]), 3
        )
        result.update(evaluate(keys))
    args.out.write_text(json.dumps(result, indent=1, default=str))
    for name, row in result["summary"].items():
        print(name, json.dumps(row))
    print("latency ms (median):", result["latency_ms_median"])
    print("load cost of the vectors:", result["load_cost_with_vectors"], timings)
    print("misses:", json.dumps(result["misses"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
