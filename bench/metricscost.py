"""What the metrics cost: the card fetch and the first-query discovery rows against
``make serve`` as shipped (bench.shipped: honcho running Procfile.serve), once with
``METRICS_ENABLED=false`` and once with the metrics on (the default), in one run, and the
difference in per cent (issue target: within 5 %). Tracing stays off (no ``OTEL_*``).

    python -m bench.metricscost --database-url postgres://…/registry_bench5k [--setup 5000]

``--setup N`` drops, migrates and loads the database with N generated agents first (as
``python -m bench.firstquery setup``); without it the database must be loaded already.
Each round starts the shipped server twice, once with the metrics off and once on (off
first in odd rounds, on first in even ones), warms its card fetch as the whole run does
(three fetches per card per worker), then measures the card fetch and each ``--kinds``
distinct row (each URL asked once in the run, so every answer is a first query). The
shipped server keeps its read limit (1,200 a minute per client), so the load comes from
the built-in generator over 256 client addresses, as the whole run's shipped row does. One
JSON line a round; the last line has each row's median off and on, each round's (on - off)
/ off x 100 (``rounds_percent``: negative is what the metrics cost) and their median
(``on_vs_off_percent``).
"""

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from bench.shipped import CLIENT_ADDRESSES, ShippedServer
from bench.throughput import say, throughput, throughput_distinct

STATES = (("off", "false"), ("on", "true"))
TARGET_PERCENT = 5.0


class MetricsServer(ShippedServer):
    """``make serve`` as shipped, with METRICS_ENABLED as given."""

    def __init__(self, *, metrics_enabled: str, **kwargs):
        super().__init__(**kwargs)
        self.metrics_enabled = metrics_enabled

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env["METRICS_ENABLED"] = self.metrics_enabled
        # Tracing off, whatever the caller's shell says: only the metrics differ.
        for name in [k for k in env if k.startswith("OTEL_")]:
            del env[name]
        return env


def state_measure(
    state: str, enabled: str, args, pools: dict, cards: list[str], tmp: Path
) -> dict[str, float]:
    """One shipped server with the metrics ``enabled``: the card fetch warmed, then each row."""
    from bench.__main__ import CARD_WARM_FETCHES
    from bench.server import WORKERS, port_free

    addresses = tuple(CLIENT_ADDRESSES)
    server = MetricsServer(
        metrics_enabled=enabled,
        port=port_free(),
        database_url=args.database_url,
        redis_url=args.redis_url,
        log_path=tmp / f"shipped-{state}.log",
    )
    server.start(timeout=args.start_timeout)
    rates = {}
    try:
        row = throughput(
            f"card-{state}",
            cards,
            args,
            server.port,
            "python",
            tmp,
            warm_requests=CARD_WARM_FETCHES * WORKERS * len(cards),
            addresses=addresses,
        )
        rates["card"] = row.requests_per_second
        for kind, pool in pools.items():
            row = throughput_distinct(
                f"distinct-{kind.replace('+', '-')}-{state}",
                pool,
                args.share,
                args,
                server.port,
                "python",
                tmp,
                addresses=addresses,
            )
            rates[f"distinct {kind}"] = row["requests_per_second"]
    except BaseException:
        say(server.log())
        raise
    finally:
        server.stop()
    say(f"  metrics {state}: " + ", ".join(f"{k} {v:.0f} req/s" for k, v in rates.items()))
    return rates


def summary(rounds: list[dict[str, dict[str, float]]]) -> dict:
    """Each row's median off and on over the rounds, on against off in per cent for each
    round (the two halves of a round ran one after the other), and their median."""
    rows = {}
    for name in rounds[0]["off"]:
        off = statistics.median(r["off"][name] for r in rounds)
        on = statistics.median(r["on"][name] for r in rounds)
        each = [
            round((r["on"][name] - r["off"][name]) / r["off"][name] * 100, 1)
            for r in rounds
            if r["off"][name]
        ]
        percent = statistics.median(each) if each else None
        rows[name] = {
            "off": round(off),
            "on": round(on),
            "rounds_percent": each,
            "on_vs_off_percent": percent,
            "within_target": percent is not None and percent >= -TARGET_PERCENT,
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    from bench import discover, load

    parser = argparse.ArgumentParser(prog="python -m bench.metricscost", description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--setup", type=int, default=0, help="load N agents first")
    parser.add_argument("--kinds", default="text,text+filter", help="comma-separated")
    parser.add_argument("--duration", type=float, default=15)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--share", type=int, default=4000, help="URLs a row may send")
    parser.add_argument("--seed", type=int, default=3, help="of the URLs' order")
    parser.add_argument("--redis-url", default="")
    parser.add_argument(
        "--start-timeout", type=float, default=180, help="seconds for make serve to answer"
    )
    parser.add_argument("--out", type=Path, help="JSON results")
    args = parser.parse_args(argv)
    if "bench" not in args.database_url.rsplit("/", 1)[-1]:
        raise SystemExit("--database-url: the database's name must contain 'bench'")
    if args.setup:
        from bench import firstquery

        firstquery.setup(
            argparse.Namespace(
                database_url=args.database_url, agents=args.setup, seed=1, private_share=0.0
            )
        )
    load.django_start(args.database_url)
    cards = load.card_paths()
    pools = {
        kind: discover.DistinctQueries(kind, args.seed) for kind in args.kinds.split(",") if kind
    }
    rounds = []
    with tempfile.TemporaryDirectory(prefix="registry-bench-metrics-") as tmp_name:
        for number in range(args.rounds):
            measured = {}
            # Alternated (off then on, then on then off): whatever drifts over the run
            # (the database's and the page cache's state) weighs on both halves alike.
            for state, enabled in STATES if number % 2 == 0 else STATES[::-1]:
                say(f"round {number + 1}: metrics {state}")
                measured[state] = state_measure(state, enabled, args, pools, cards, Path(tmp_name))
            rounds.append(measured)
            say(json.dumps({"round": number + 1, **measured}))
    result = {
        "agents": len(cards),
        "duration": args.duration,
        "connections": args.connections,
        "rounds": rounds,
        "rows": summary(rounds),
    }
    print(json.dumps(result["rows"]))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
