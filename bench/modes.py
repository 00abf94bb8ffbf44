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
    """p50/p95 of ``count`` distinct queries of the pool's kind in each mode, one client: as
    bench.discover.discovery_measure's kinds ``text (hybrid)`` and ``text (keyword)``."""
    paths = pool.take(count)
    kind = pool.kind
    return {
        f"{kind} ({mode})": discover.discovery_measure(port, kind, _in_mode(paths, mode))
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
    """Rows ``distinct text (hybrid)`` and ``distinct text (keyword)`` (of the pool's kind):
    ``share`` URLs of ``pool`` sent in order in each mode; ``repeated`` counts requests past
    their end."""
    warm = pool.take(WARM_URLS)
    paths = pool.take(share)
    rows = {}
    kind = pool.kind
    for mode in MODES:
        name = f"distinct-{kind.replace('+', '-')}-{mode}"
        _runner(f"{name}-warm", _in_mode(warm, mode), args, port, generator, tmp, in_order=True)(
            max(1.0, args.duration / 5)
        )
        run = _runner(name, _in_mode(paths, mode), args, port, generator, tmp, in_order=True)
        result = run(args.duration)
        if result.errors > result.requests * 0.01:
            raise BenchError(f"{name}: {result.errors} of {result.requests} requests failed")
        rows[f"distinct {kind} ({mode})"] = {
            **result.as_dict(),
            "urls": len(paths),
            "repeated": max(0, result.requests - len(paths)),
        }
        say(f"  distinct {kind} ({mode}): {result.requests_per_second:.0f} req/s")
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.modes --database-url …``: the two rows alone, in alternating
    rounds, on a database already loaded (``python -m bench.firstquery setup``), through the
    production server (bench.server) with its embedding service; each round's URLs new."""
    import json
    import statistics
    import tempfile

    from bench import load
    from bench.loadgen import generator_choice
    from bench.server import Server, port_free

    parser = argparse.ArgumentParser(prog="python -m bench.modes", description=main.__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--share", type=int, default=3000, help="URLs a row may send")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--generator", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument(
        "--kind", choices=["text", "text+filter"], default="text", help="distinct queries"
    )
    args = parser.parse_args(argv)
    generator = generator_choice(args.generator)
    load.django_start(args.database_url)
    pool = discover.DistinctQueries(args.kind, args.seed)
    port = port_free()
    ratios = []
    with tempfile.TemporaryDirectory(prefix="registry-bench-modes-") as tmp_name:
        tmp = Path(tmp_name)
        server = Server(
            port=port, database_url=args.database_url, redis_url="", log_path=tmp / "g.log"
        )
        server.start()
        try:
            single = modes_single(port, pool, 200)
            say(json.dumps(single))
            for number in range(args.rounds):
                rows = modes_throughput(pool, args.share, args, port, generator, tmp)
                rates = [rows[f"distinct {args.kind} ({m})"]["requests_per_second"] for m in MODES]
                ratios.append(rates[0] / rates[1])
                say(f"round {number + 1}: hybrid / keyword {ratios[-1]:.3f} ({rates[0]:.0f} req/s)")
        finally:
            rss = server.workers_rss_mib(), server.semantic_rss_mib()
            say(f"workers' RSS {rss[0]} MiB, the service's {rss[1]} MiB")
            server.stop()
    say(f"median hybrid / keyword over {len(ratios)} rounds: {statistics.median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
