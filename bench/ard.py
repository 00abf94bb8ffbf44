"""python -m bench.ard: the ARD rows of the benchmark on their own, at two sizes.

A focused program (the whole benchmark, ``python -m bench``, also drives them once, at
``--agents``): drops and migrates its own bench database, bulk-loads the generated agents
up to each of ``--sizes`` (the same loader, seed and live share as the whole run), and at
each size, with one gunicorn (two sync workers) running throughout:

- checks that ``POST /ard/search`` answers the same agents, in the same order, as
  ``GET /discover/agents?q=`` for a query (else the pair would compare different work);
- drives, in ``--rounds`` alternating rounds, the same text queries as
  ``GET /discover/agents?q=<word>`` and as ``POST /ard/search`` (``{"query": {"text":
  <word>}, "federation": "none", "pageSize": 20}``), each after a warm-up as long as itself,
  same generator, connections and duration; the ratio of each round and their median are
  reported (target: at least 0.8);
- assembles the AI Catalog (``protocols.ard.catalog.document.catalog_build``) in this process,
``--builds``
  times (seconds, entries, pages, root bytes), then fetches ``/.well-known/ai-catalog.json``
  and each nested page once over HTTP (bytes and time).

Alternating rounds measured minutes apart are what makes the ratio mean something on a
machine shared with other work: read the ratios, not the absolute figures.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import discover, loadgen
from bench.database import BenchError, database_config, database_reset
from bench.server import Server, port_free

BATCH_SIZE = 2000
TARGET = 0.8


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ard", description=__doc__)
    parser.add_argument(
        "--sizes", default="5000,100000", help="agents at each measurement point, ascending"
    )
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/registry_bench_ard",
        help="dropped and created by the run; its name must contain 'bench'",
    )
    parser.add_argument("--duration", type=float, default=10, help="seconds per throughput run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--requests", type=int, default=300, help="text queries in the lists")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per size")
    parser.add_argument("--builds", type=int, default=3, help="catalog builds per size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--generator", choices=["auto", "wrk", "python"], default="auto", help="load generator"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes: comma-separated integers")
    if args.sizes != sorted(set(args.sizes)) or args.sizes[0] < 1:
        parser.error("--sizes must be positive and ascending")
    if args.duration <= 0 or args.connections < 1 or args.rounds < 1 or args.builds < 1:
        parser.error("--duration, --connections, --rounds and --builds must be positive")
    return args


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def same_answer_check(port: int, search_path: str, ard_line: str) -> None:
    """POST /ard/search must rank the agents GET /discover/agents ranks for the same text."""
    import http.client

    from bench.loadgen import HOST, request_line

    _, path, body = request_line(ard_line)
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        connection.request("POST", path, body=body, headers=discover.ARD_HEADERS)
        response = connection.getresponse()
        status, answer = response.status, response.read()
    finally:
        connection.close()
    if status != 200:
        raise BenchError(f"POST /ard/search answered {status}: {answer[:300]!r}")
    found = [r["url"].rsplit("/", 1)[1] for r in json.loads(answer)["results"]]
    listed = json.loads(loadgen.requests_sequential(port, [search_path])[0].body)["results"]
    if found != [a["id"] for a in listed]:
        raise BenchError("POST /ard/search found other agents than GET /discover/agents")


def catalog_fetch(port: int) -> dict[str, Any]:
    """The root and every nested page once over HTTP: bytes and seconds."""
    root = loadgen.requests_sequential(port, ["/.well-known/ai-catalog.json"])[0]
    if root.status != 200:
        raise BenchError(f"GET /.well-known/ai-catalog.json answered {root.status}")
    pages = [
        entry["url"].split("://", 1)[1].split("/", 1)[1]
        for entry in json.loads(root.body)["entries"]
        if entry["type"] == "application/ai-catalog+json" and "url" in entry
    ]
    answers = loadgen.requests_sequential(port, [f"/{p}" for p in pages]) if pages else []
    if any(a.status != 200 for a in answers):
        raise BenchError("a nested catalog page did not answer 200")
    return {
        "root_bytes": len(root.body),
        "root_ms": round(root.seconds * 1000, 1),
        "pages": len(answers),
        "page_bytes_max": max((len(a.body) for a in answers), default=0),
        "page_ms_max": round(max((a.seconds for a in answers), default=0) * 1000, 1),
    }


def size_measure(args, port: int, generator: str, tmp: Path, agents: int) -> dict[str, Any]:
    from bench.__main__ import throughput

    searches, _ = discover.throughput_pairs(args.requests, args.seed)
    ard_lines = discover.ard_search_lines(searches)
    same_answer_check(port, searches[0], ard_lines[0])
    rounds = []
    for number in range(1, args.rounds + 1):
        get = throughput("discover", searches, args, port, generator, tmp)
        ard = throughput("ard-search", ard_lines, args, port, generator, tmp, discover.ARD_HEADERS)
        ratio = ard.requests_per_second / get.requests_per_second
        say(
            f"  round {number}: GET {get.requests_per_second:.0f} req/s, "
            f"ARD {ard.requests_per_second:.0f} req/s, ratio {ratio:.3f}"
        )
        rounds.append(
            {"discover": get.as_dict(), "ard-search": ard.as_dict(), "ratio": round(ratio, 3)}
        )
    builds = []
    for _ in range(args.builds):
        builds.append(discover.catalog_build_measure())
        say(f"  catalog build: {builds[-1]}")
    fetched = catalog_fetch(port)
    say(f"  catalog over HTTP: {fetched}")
    ratios = [r["ratio"] for r in rounds]
    return {
        "agents": agents,
        "rounds": rounds,
        "ratio_median": round(statistics.median(ratios), 3),
        "holds": statistics.median(ratios) >= TARGET,
        "catalog_builds": builds,
        "catalog_build_seconds_median": round(statistics.median(b["seconds"] for b in builds), 3),
        "catalog_fetch": fetched,
    }


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import commit, generator_choice, machine

    args = options(argv)
    from bench import load

    database_config(args.database_url)
    generator = generator_choice(args.generator)
    code = commit()
    say(f"resetting {args.database_url}")
    database_reset(args.database_url)
    load.django_start(args.database_url)
    load.database_migrate()
    sizes: list[dict[str, Any]] = []
    loads = []
    port = port_free()
    loaded = 0
    with tempfile.TemporaryDirectory(prefix="registry-bench-ard-") as tmp_name:
        tmp = Path(tmp_name)
        server = Server(
            port=port, database_url=args.database_url, redis_url="", log_path=tmp / "g.log"
        )
        try:
            for size in args.sizes:
                say(f"loading agents {loaded}..{size - 1}")
                loads.append(
                    load.agents_load(
                        phase=f"to {size}",
                        seed=args.seed,
                        start=loaded,
                        stop=size,
                        batch_size=BATCH_SIZE,
                    ).as_dict()
                )
                loaded = size
                load.endpoints_make_live(args.seed)
                load.database_analyze()
                if server.process is None:
                    server.start()
                    discover.discovery_warm(port, args.seed)
                say(f"N={size}: GET /discover/agents?q= against POST /ard/search, {generator}")
                sizes.append(size_measure(args, port, generator, tmp, size))
        except BaseException:
            say(server.log())
            raise
        finally:
            server.stop()
    results = {
        "meta": {
            "program": "python -m bench.ard",
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": code,
            "machine": machine(),
            "generator": generator,
            "options": {k: v for k, v in vars(args).items() if k not in ("out", "database_url")},
        },
        "load": loads,
        "sizes": sizes,
    }
    text = json.dumps(results, indent=2, default=str)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        say(f"bench.ard: {exc}")
        sys.exit(2)
