"""Search by meaning's price: the same distinct text queries (each URL a first query,
taken from the run's pool of distinct text URLs, so no row answers from a page another
cached) asked in the default mode (``hybrid``: keyword order and nearest-by-meaning order
fused) and with ``mode=keyword``, one client (p50/p95) and under load (throughput, the
same generator), hybrid first."""

import argparse
from pathlib import Path
from typing import Any

from bench import discover
from bench.database import BenchError
from bench.throughput import _runner, say

MODES = ("hybrid", "keyword")
# Under load: URLs sent to warm both modes first (worker start-up, the service's pages).
WARM_URLS = 300


def _in_mode(paths: list[str], mode: str) -> list[str]:
    return paths if mode == "hybrid" else [f"{path}&mode={mode}" for path in paths]


def modes_single(port: int, pool: discover.DistinctQueries, count: int) -> dict[str, Any]:
    """p50/p95 of ``count`` distinct text queries in each mode, one client: as
    bench.discover.discovery_measure's kinds ``text (hybrid)`` and ``text (keyword)``."""
    paths = pool.take(count)
    return {
        f"text ({mode})": discover.discovery_measure(port, "text", _in_mode(paths, mode))
        for mode in MODES
    }


def modes_throughput(
    pool: discover.DistinctQueries,
    share: int,
    args: argparse.Namespace,
    port: int,
    generator: str,
    tmp: Path,
) -> dict[str, Any]:
    """Rows ``distinct text (hybrid)`` and ``distinct text (keyword)``: ``share`` URLs of
    ``pool`` sent in order in each mode; ``repeated`` counts requests past their end."""
    warm = pool.take(WARM_URLS)
    paths = pool.take(share)
    rows = {}
    for mode in MODES:
        name = f"distinct-text-{mode}"
        _runner(f"{name}-warm", _in_mode(warm, mode), args, port, generator, tmp, in_order=True)(
            max(1.0, args.duration / 5)
        )
        run = _runner(name, _in_mode(paths, mode), args, port, generator, tmp, in_order=True)
        result = run(args.duration)
        if result.errors > result.requests * 0.01:
            raise BenchError(f"{name}: {result.errors} of {result.requests} requests failed")
        rows[f"distinct text ({mode})"] = {
            **result.as_dict(),
            "urls": len(paths),
            "repeated": max(0, result.requests - len(paths)),
        }
        say(f"  distinct text ({mode}): {result.requests_per_second:.0f} req/s")
    return rows
