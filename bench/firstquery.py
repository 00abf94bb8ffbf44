"""Where a first discovery query's time goes: in process, through the project's WSGI
application (the lean lane, then Django), each URL asked once (bench.discover's distinct
queries), so no answer comes from a cache another query filled.

    python -m bench.firstquery setup --database-url postgres://…/h_bench --agents 5000
    python -m bench.firstquery profile --database-url postgres://…/h_bench [--count 200]

``setup`` drops, migrates and bulk-loads the database as ``python -m bench`` does, and
gives the same 30% of endpoints a heartbeat. ``profile`` asks ``--count`` distinct queries
of each kind and prints, per kind, one JSON line: wall and CPU time a request (median, p95),
the time spent in SQL statements and their number, the answer's bytes; ``--explain N``:
each statement of N more requests with its time; ``--cprofile N``: the N functions that
took the most time (``--sort tottime`` or ``cumulative``); ``--mode keyword``: the queries
with words in that search mode (the default: hybrid).
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

from bench.database import database_reset
from bench.load import BASE_URL


def _environ(path: str) -> dict:
    path, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "REMOTE_ADDR": "127.0.0.1",
    }


def _call(app, path: str) -> bytes:
    answer = {}

    def start(status, headers, exc_info=None):
        answer["status"] = status

    body = b"".join(app(_environ(path), start))
    if not answer["status"].startswith("200"):
        raise SystemExit(f"{path}: {answer['status']} {body[:300]!r}")
    return body


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def _with_mode(path: str, mode: str) -> str:
    """A query of words in this search ``mode`` (none: the default, hybrid)."""
    return f"{path}&mode={mode}" if mode and "q=" in path else path


def setup(args) -> None:
    os.environ.setdefault("RATE_LIMIT_READ", "100000000/sec")
    database_reset(args.database_url)
    from bench import load

    load.django_start(args.database_url)
    load.database_migrate()
    phase = load.agents_load(
        phase="all", seed=args.seed, start=0, stop=args.agents, batch_size=2000
    )
    if args.private_share:
        load.agents_make_private(args.seed, args.private_share)
    load.endpoints_make_live(args.seed)
    load.trust_spread(args.seed)  # as python -m bench: what minTrust and sort=trust read
    load.database_analyze()
    print(json.dumps(phase.as_dict()))


def profile(args) -> None:
    os.environ.update(
        ALLOWED_HOSTS="127.0.0.1",
        RATE_LIMIT_READ="100000000/sec",
        REGISTRY_BASE_URL=BASE_URL,
    )
    from bench import load
    from bench.discover import distinct_pools

    load.django_start(args.database_url)
    from django.db import connection

    from registry.wsgi import application

    pools = distinct_pools(args.seed + 1000)  # not the URLs of a bench run with this seed
    statements: list[tuple[str, float]] = []

    def record(execute, sql, params, many, context):
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements.append((sql, time.perf_counter() - began))

    _call(application, "/discover/agents?q=warm")  # imports, the first connection
    kinds = [k for k in args.kinds.split(",") if k] or list(pools)
    for kind in kinds:
        paths = [_with_mode(path, args.mode) for path in pools[kind].take(args.count)]
        walls, cpus, sql_times, counts, sizes = [], [], [], [], []
        profiler = cProfile.Profile() if args.cprofile else None
        with connection.execute_wrapper(record):
            for path in paths:
                statements.clear()
                wall, cpu = time.perf_counter(), time.process_time()
                if profiler:
                    profiler.enable()
                body = _call(application, path)
                if profiler:
                    profiler.disable()
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
                sql_times.append(sum(t for _, t in statements))
                counts.append(len(statements))
                sizes.append(len(body))
        line = {
            "kind": kind,
            "requests": len(paths),
            "wall_ms_p50": round(statistics.median(walls) * 1000, 2),
            "wall_ms_p95": round(_percentile(walls, 95) * 1000, 2),
            "cpu_ms_p50": round(statistics.median(cpus) * 1000, 2),
            "sql_ms_p50": round(statistics.median(sql_times) * 1000, 2),
            "python_ms_p50": round(
                statistics.median(w - s for w, s in zip(walls, sql_times, strict=True)) * 1000, 2
            ),
            "statements_p50": statistics.median(counts),
            "statements_max": max(counts),
            "bytes_p50": statistics.median(sizes),
        }
        print(json.dumps(line), flush=True)
        if args.explain:
            _explain(application, pools[kind].take(args.explain), record, statements)
        if profiler:
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out).sort_stats(args.sort)
            stats.print_stats(args.cprofile)
            print(out.getvalue())


def _explain(application, paths, record, statements) -> None:
    """Each statement of these requests, with its time."""
    from django.db import connection

    for path in paths:
        with connection.execute_wrapper(record):
            statements.clear()
            _call(application, path)
        print(f"# {path}")
        for sql, seconds in list(statements):
            print(f"## {seconds * 1000:.2f} ms: {sql[:400]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.firstquery", description=__doc__)
    parser.add_argument("command", choices=["setup", "profile"])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--private-share", type=float, default=0.0, help="setup: share of agents made private"
    )
    parser.add_argument("--explain", type=int, default=0, help="requests whose SQL to print")
    parser.add_argument("--cprofile", type=int, default=0, help="functions to print")
    parser.add_argument("--sort", default="cumulative", help="cumulative or tottime")
    parser.add_argument("--kinds", default="", help="comma-separated distinct kinds (all)")
    parser.add_argument("--mode", default="", help="search mode of the queries with words")
    args = parser.parse_args(argv)
    {"setup": setup, "profile": profile}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
