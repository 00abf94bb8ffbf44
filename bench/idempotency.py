"""What an Idempotency-Key costs a registration: ``python -m bench.idempotency``.

Starts the production server (``bench.server``: gunicorn, two sync workers) on a bench
database it creates afresh, and registers agents natively (``POST /agents`` over HTTP, one
client on one kept-alive connection) in rounds of pairs: a registration with a fresh
``Idempotency-Key`` and one without, one after the other, which goes first alternating from
pair to pair. Prints each round's share (median with a key / median without - 1), and the
median and spread of those shares: the two of a pair see the same load, so the shares hold
on a busy machine where absolute times do not.
"""

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.database import database_reset
from bench.load import ROOT
from bench.server import Server, port_free


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.idempotency", description=__doc__)
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/registry_bench_idempotency",
        help="a database whose name contains 'bench' (dropped and created afresh)",
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=25)
    return parser.parse_args(argv)


PAYLOAD = {
    "name": "Summarizer",
    "description": "Summarizes long documents.",
    "capabilities": [{"name": "summarize", "tags": ["nlp", "text"]}],
    "endpoints": [
        {
            "name": "primary",
            "transport": "Http",
            "protocol": "A2A",
            "address": "https://summarizer.example.com/a2a",
            "livenessModel": "Persistent",
            "heartbeatIntervalSeconds": 60,
        }
    ],
}


def manage(server: Server, *args: str) -> str:
    """A manage.py command with the server's environment; its output."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=server.environment(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    database_reset(args.database_url)
    with tempfile.TemporaryDirectory(prefix="bench-idempotency-") as work:
        server = Server(
            port=port_free(),
            database_url=args.database_url,
            redis_url="",
            log_path=Path(work) / "server.log",
        )
        manage(server, "migrate", "--noinput", "--verbosity", "0")
        key = manage(server, "create_api_key", "--owner", "bench").strip().splitlines()[-1]
        server.start()
        try:
            shares, plain, keyed = measure(server.port, key, args.rounds, args.per_round)
        finally:
            server.stop()
    quartiles = statistics.quantiles(shares, n=4)
    print(f"registrations: {len(plain)} without a key, {len(keyed)} with a fresh key")
    print(
        f"median time: {statistics.median(plain) * 1000:.2f} ms without, "
        f"{statistics.median(keyed) * 1000:.2f} ms with"
    )
    print("shares by round: " + " ".join(f"{share:+.1%}" for share in shares))
    print(
        f"share: median {statistics.median(shares):+.1%}, quartiles {quartiles[0]:+.1%} to "
        f"{quartiles[2]:+.1%}, range {min(shares):+.1%} to {max(shares):+.1%}"
    )
    return 0


def measure(
    port: int, key: str, rounds: int, per_round: int
) -> tuple[list[float], list[float], list[float]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps(PAYLOAD)

    def register(idempotency_key: str | None) -> float:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        started = time.perf_counter()
        connection.request("POST", "/agents", body, headers)
        response = connection.getresponse()
        answer = response.read()
        elapsed = time.perf_counter() - started
        if response.status != 201:
            raise SystemExit(f"registration failed: {response.status} {answer[:500]!r}")
        return elapsed

    for _ in range(50):  # warm-up: connections, caches, code paths
        register(None)
        register(uuid.uuid4().hex)
    shares: list[float] = []
    plain: list[float] = []
    keyed: list[float] = []
    for round_ in range(rounds):
        batches: dict[bool, list[float]] = {False: [], True: []}
        for index in range(per_round):
            # Pairs in A-B, B-A order by turns: a drift in load falls on both alike.
            for with_key in (False, True) if (round_ + index) % 2 == 0 else (True, False):
                batches[with_key].append(register(uuid.uuid4().hex if with_key else None))
        plain += batches[False]
        keyed += batches[True]
        shares.append(statistics.median(batches[True]) / statistics.median(batches[False]) - 1)
    connection.close()
    return shares, plain, keyed


if __name__ == "__main__":
    sys.exit(main())
