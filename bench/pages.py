"""The public pages (web/): their latency as one person sees it, at the full size.

The browse page runs discovery (results and every facet) and renders HTML; an agent's page
reads the agent, its card and its AAP status. Each is asked sequentially over one
connection, so the figure is the server's time plus a local round trip."""

import random
from typing import Any
from urllib.parse import urlencode

from bench.database import BenchError
from bench.generate import query_words
from bench.loadgen import percentile, requests_sequential

PAGE_KINDS = {
    "home": "/",
    "browse": "/browse?q=<word>",
    "agent": "/browse/agents/<id>",
}


def page_paths(kind: str, count: int, seed: int, agent_ids: list[str]) -> list[str]:
    rng = random.Random(f"{seed}-page-{kind}")
    if kind == "home":
        return ["/"] * count
    if kind == "browse":
        return [f"/browse?{urlencode({'q': rng.choice(query_words())})}" for _ in range(count)]
    return [f"/browse/agents/{rng.choice(agent_ids)}" for _ in range(count)]


def pages_measure(port: int, paths: dict[str, list[str]]) -> dict[str, Any]:
    """p50/p95 of each page kind; every answer must be a 200 HTML page."""
    pages = {}
    for kind, kind_paths in paths.items():
        requests_sequential(port, kind_paths[:3])  # warm: templates compiled, caches filled
        answers = requests_sequential(port, kind_paths)
        failed = [a for a in answers if a.status != 200]
        if failed:
            raise BenchError(f"page '{kind}' answered {failed[0].status}: {failed[0].body[:300]!r}")
        latencies = sorted(a.seconds for a in answers)
        pages[kind] = {
            "requests": len(answers),
            "p50_ms": round(percentile(latencies, 50) * 1000, 3),
            "p95_ms": round(percentile(latencies, 95) * 1000, 3),
            "max_ms": round(latencies[-1] * 1000, 3),
        }
    return pages
