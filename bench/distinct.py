"""The distinct-query rows alone (``python -m bench``'s ``distinct <kind>``: each URL a
first query), on a database already loaded (``python -m bench`` or ``python -m
bench.firstquery setup``), through the production server (bench.server) with its embedding
service: for a side-by-side run of two versions of the code on one machine in minutes,
where the whole benchmark takes most of an hour (whose card fetch, warmed for minutes, is
what these rows are measured against).

    python -m bench.distinct --database-url postgres://…/registry_bench --kinds filter,text+filter

Each round measures every kind with URLs no round sent before and prints one JSON line;
the last line has each row's median over the rounds. ``--card``: each round measures the
card fetch too (warmed once first, as ``python -m bench`` warms it), and the last line has
each row's median ratio to it, the ratio the benchmark's targets are stated in:

    python -m bench.distinct --database-url … --card \
        --kinds text+filter,text+capability,text+provider,text+protocol,text+binding,text+fact
"""

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from bench import discover
from bench.throughput import say, throughput, throughput_distinct


def main(argv: list[str] | None = None) -> int:
    from bench import load
    from bench.loadgen import generator_choice
    from bench.server import Server, port_free

    parser = argparse.ArgumentParser(prog="python -m bench.distinct", description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--kinds", default="filter,text+filter", help="comma-separated")
    parser.add_argument("--duration", type=float, default=15)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--share", type=int, default=4000, help="URLs a row may send")
    parser.add_argument("--seed", type=int, default=2, help="of the URLs' order")
    parser.add_argument("--generator", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--card", action="store_true", help="measure the card fetch too")
    parser.add_argument(
        "--sequential",
        default="",
        help="comma-separated kinds of python -m bench's sequential discovery rows "
        "(bench.discover.QUERY_KINDS: p50 and p95 of --requests URLs, one at a time), "
        "measured in each round after the distinct rows, in turn first to last and back",
    )
    parser.add_argument("--requests", type=int, default=300, help="a sequential row's URLs")
    args = parser.parse_args(argv)
    generator = generator_choice(args.generator)
    load.django_start(args.database_url)
    kinds = [kind for kind in args.kinds.split(",") if kind]
    pools = {kind: discover.DistinctQueries(kind, args.seed) for kind in kinds}
    rounds: list[dict[str, float]] = []
    sequential_rounds: list[dict[str, dict]] = []
    port = port_free()
    with tempfile.TemporaryDirectory(prefix="registry-bench-distinct-") as tmp_name:
        tmp = Path(tmp_name)
        server = Server(
            port=port, database_url=args.database_url, redis_url="", log_path=tmp / "g.log"
        )
        server.start()
        try:
            cards = _card_warm(args, port, generator, tmp) if args.card else []
            for number in range(args.rounds):
                rates = {}
                if cards:
                    row = throughput("card", cards, args, port, generator, tmp)
                    rates["card"] = row.requests_per_second
                for kind, pool in pools.items():
                    row = throughput_distinct(
                        f"distinct-{kind.replace('+', '-')}",
                        pool,
                        args.share,
                        args,
                        port,
                        generator,
                        tmp,
                    )
                    rates[f"distinct {kind}"] = row["requests_per_second"]
                latencies = _sequential(args, port, number)
                rounds.append(rates)
                sequential_rounds.append(latencies)
                shown = {k: round(v) for k, v in rates.items()}
                say(json.dumps({"round": number + 1, **shown, **latencies}))
        finally:
            server.stop()
    medians = {name: round(statistics.median(r[name] for r in rounds)) for name in rounds[0]}
    if sequential_rounds and sequential_rounds[0]:
        medians["sequential"] = {
            name: {
                figure: round(statistics.median(r[name][figure] for r in sequential_rounds), 2)
                for figure in ("p50_ms", "p95_ms")
            }
            for name in sequential_rounds[0]
        }
    ratios = {}
    if args.card:
        ratios = {
            name: round(statistics.median(r[name] / r["card"] for r in rounds), 3)
            for name in rounds[0]
            if name != "card"
        }
    say(json.dumps({"median": medians, **({"ratio_to_card": ratios} if ratios else {})}))
    return 0


def _sequential(args, port: int, number: int) -> dict[str, dict]:
    """The sequential discovery rows of ``--sequential`` (bench.discover.discovery_measure),
    in turn first to last in even rounds and last to first in odd ones, warmed first."""
    kinds = [kind for kind in args.sequential.split(",") if kind]
    if not kinds:
        return {}
    if number == 0:
        discover.discovery_warm(port, args.seed)
    measured = {}
    for kind in kinds if number % 2 == 0 else kinds[::-1]:
        paths = discover.query_paths(kind, args.requests, args.seed)
        figures = discover.discovery_measure(port, kind, paths)
        measured[f"discover {kind}"] = {k: figures[k] for k in ("p50_ms", "p95_ms")}
    return measured


def _card_warm(args, port: int, generator: str, tmp: Path) -> list[str]:
    """The card paths, fetched first as ``python -m bench`` warms its card row (three
    fetches per card per worker): the card fetch's steady state."""
    from bench import load
    from bench.__main__ import CARD_WARM_FETCHES
    from bench.server import WORKERS

    paths = load.card_paths()
    say("warming the card fetch")
    throughput(
        "card",
        paths,
        args,
        port,
        generator,
        tmp,
        warm_requests=CARD_WARM_FETCHES * WORKERS * len(paths),
    )
    return paths


if __name__ == "__main__":
    raise SystemExit(main())
