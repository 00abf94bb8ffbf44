"""A pinned card version against the latest card: ``python -m bench.pinned``.

Loads ``--agents`` generated agents on a bench database it creates afresh, starts the
registry as ``python -m bench`` does (gunicorn, two sync workers, ``bench.server``) and drives
``GET /a2a/agents/<id>`` and ``GET /a2a/agents/<id>?version=1`` over every agent in random
order with the same generator, connections and duration, in ``--rounds`` alternating rounds
(the latest first in even rounds, the pinned first in odd ones, so that a machine whose load
drifts weighs on both alike). Each kind is warmed first as ``python -m bench`` warms the card
row (three fetches per card per worker). It prints each round's rates and their ratio, and the
median ratio: the target is at least 0.9 (``bench.report.PINNED_TO_CARD_MIN``).

``--card-cache-mb 0`` runs the server without its card cache, so that every fetch is a
database read: the read of a version against the read of the latest.

Then, in this process, the lean lane alone (``registry.fastpath.lean.LeanApplication`` called
as gunicorn calls it, no HTTP): the CPU time per request of the first 2,000 agents' cards,
latest and pinned in alternating rounds, with the card cache warm and with every request read
from the database. It is less at the mercy of a loaded machine than the server's rates
(the CPU time of this process only), and shows where a difference comes from.
``--lane-only`` measures this part alone.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.__main__ import BATCH_SIZE, CARD_WARM_FETCHES, generator_choice, say, throughput
from bench.database import BenchError, database_reset
from bench.server import WORKERS, Server, port_free
from bench.targets import PINNED_TO_CARD_MIN


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.pinned", description=__doc__)
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/registry_bench_pinned",
        help="a database whose name contains 'bench' (dropped and created afresh)",
    )
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10, help="seconds per run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--card-cache-mb", type=int, default=None, help="the server's cache")
    parser.add_argument("--generator", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--lane-only", action="store_true", help="no server: the lane alone")
    args = parser.parse_args(argv)
    if args.agents < 1 or args.rounds < 1 or args.duration <= 0 or args.connections < 1:
        parser.error("--agents, --rounds, --duration and --connections must be positive")
    return args


LANE_AGENTS = 2000


def lane_measure(latest: list[str], pinned: list[str], rounds: int) -> dict[str, dict]:
    """CPU microseconds per request of the lean lane for the latest and the pinned card, with
    the card cache warm and with it off (each request a database read); the median of the
    rounds and the ratio of the rates (pinned / latest)."""
    import time

    from django.test import RequestFactory

    from protocols.a2a.cards.selectors import card_cache
    from registry.fastpath.lean import LeanApplication

    def django_application(environ, start_response):  # what the lane leaves: a failure here
        start_response("599 Not Answered By The Lane", [])
        return [b""]

    lane = LeanApplication(django_application)
    factory = RequestFactory()

    def environ_of(path: str) -> dict:
        route, _, query = path.partition("?")
        environ = factory.get(route, HTTP_HOST="127.0.0.1").environ
        environ["QUERY_STRING"] = query
        return environ

    kinds = {
        "latest": [environ_of(p) for p in latest[:LANE_AGENTS]],
        "pinned": [environ_of(p) for p in pinned[:LANE_AGENTS]],
    }
    statuses: list[str] = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    def run(environs: list[dict]) -> float:
        statuses.clear()
        began = time.process_time()
        for environ in environs:
            b"".join(lane(dict(environ), start_response))
        took = time.process_time() - began
        if any(not status.startswith("200") for status in statuses):
            raise BenchError(f"the lane did not answer every card: {sorted(set(statuses))}")
        return took / len(environs) * 1e6

    figures = {}
    max_bytes = card_cache.max_bytes
    for mode in ("cached", "database"):
        card_cache.max_bytes = max_bytes if mode == "cached" else 0
        for environs in kinds.values():  # the cache warm, the statements prepared
            run(environs)
        times: dict[str, list[float]] = {"latest": [], "pinned": []}
        for number in range(max(rounds, 3)):
            order = list(kinds) if number % 2 == 0 else list(reversed(kinds))
            for name in order:
                times[name].append(run(kinds[name]))
        medians = {name: statistics.median(values) for name, values in times.items()}
        figures[mode] = {
            "latest_us": round(medians["latest"], 1),
            "pinned_us": round(medians["pinned"], 1),
            "ratio": round(medians["latest"] / medians["pinned"], 3),
        }
        say(
            f"lane, card cache {mode}: latest {medians['latest']:.1f} us, pinned "
            f"{medians['pinned']:.1f} us of CPU a request; ratio of rates "
            f"{figures[mode]['ratio']:.3f}"
        )
    card_cache.max_bytes = max_bytes
    return figures


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    from bench import load

    # The lane in this process counts reads as the server does: no limit measured.
    os.environ.update(RATE_LIMIT_READ="100000000/sec", ALLOWED_HOSTS="127.0.0.1")
    try:
        generator = generator_choice(args.generator)
        say(f"resetting {args.database_url}")
        database_reset(args.database_url)
        load.django_start(args.database_url)
        load.database_migrate()
        load.agents_load(
            phase="all", seed=args.seed, start=0, stop=args.agents, batch_size=BATCH_SIZE
        )
        load.database_analyze()
        latest = load.card_paths()
        pinned = [f"{path}?version=1" for path in latest]
        if args.card_cache_mb is not None:
            os.environ["CARD_CACHE_MB"] = str(args.card_cache_mb)  # the server's environment
        if args.lane_only:
            lane = lane_measure(latest, pinned, args.rounds)
            if args.out is not None:
                args.out.write_text(json.dumps({"lane": lane}, indent=2) + "\n")
            return 0
        warm = CARD_WARM_FETCHES * WORKERS * len(latest) if args.card_cache_mb != 0 else 0
        rounds = []
        with tempfile.TemporaryDirectory(prefix="registry-bench-pinned-") as tmp_name:
            tmp = Path(tmp_name)
            server = Server(
                port=port_free(),
                database_url=args.database_url,
                redis_url="",
                log_path=tmp / "gunicorn.log",
            )
            server.start()
            try:
                kinds = {"card": latest, "card-pinned": pinned}
                for name, paths in kinds.items():  # warmed once, each: the steady state
                    say(f"warming {name}")
                    throughput(name, paths, args, server.port, generator, tmp, warm_requests=warm)
                for number in range(args.rounds):
                    order = list(kinds) if number % 2 == 0 else list(reversed(kinds))
                    rates = {}
                    for name in order:
                        result = throughput(name, kinds[name], args, server.port, generator, tmp)
                        rates[name] = result.requests_per_second
                    ratio = rates["card-pinned"] / rates["card"]
                    rounds.append({**rates, "ratio": ratio})
                    say(
                        f"round {number + 1}: latest {rates['card']:.0f} req/s, pinned "
                        f"{rates['card-pinned']:.0f} req/s, ratio {ratio:.3f}"
                    )
            finally:
                server.stop()
        lane = lane_measure(latest, pinned, args.rounds)
    except BenchError as exc:
        say(f"bench.pinned: {exc}")
        return 2
    median = statistics.median(r["ratio"] for r in rounds)
    each = ", ".join(f"{r['ratio']:.3f}" for r in rounds)
    verdict = "holds" if median >= PINNED_TO_CARD_MIN else "missed"
    print(
        f"pinned / latest card fetch at N={args.agents}, {args.rounds} rounds of "
        f"{args.duration:g} s, {args.connections} connections, {generator}, card cache "
        f"{'default' if args.card_cache_mb is None else f'{args.card_cache_mb} MB'}: "
        f"median {median:.3f} (each: {each}); "
        f"target >= {PINNED_TO_CARD_MIN}: {verdict}"
    )
    if args.out is not None:
        figures = {
            "options": {k: str(v) for k, v in vars(args).items()},
            "rounds": rounds,
            "lane": lane,
        }
        args.out.write_text(json.dumps({**figures, "median_ratio": median}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
