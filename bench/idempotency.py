"""What an Idempotency-Key costs a registration: ``python -m bench.idempotency``.

Registers agents natively (``POST /agents``, the whole Django stack, in process) in
alternating rounds with and without a fresh ``Idempotency-Key``, on a bench database it
creates afresh, and prints the mean time of each and the key's share. The key adds one
insert (the claim) and one update (the answer) to the registration's transaction work.
"""

import argparse
import json
import os
import statistics
import sys
import time
import uuid


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


def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    from bench.database import database_reset

    database_reset(args.database_url)
    os.environ.update(
        DATABASE_URL=args.database_url,
        DJANGO_SETTINGS_MODULE="registry.settings",
        DEBUG="0",
        SECRET_KEY="bench-idempotency",
        REGISTRY_BASE_URL="http://127.0.0.1:8000",
        ALLOWED_HOSTS="testserver",
        RATE_LIMIT_WRITE="1000000/min",
        RATE_LIMIT_READ="1000000/min",
    )
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from registry.access.keys import api_key_create

    call_command("migrate", verbosity=0)
    _, key = api_key_create(owner="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    body = json.dumps(PAYLOAD)

    def register(idempotency_key: str | None) -> float:
        headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key else {}
        started = time.perf_counter()
        response = client.post("/agents", body, content_type="application/json", **headers)
        elapsed = time.perf_counter() - started
        if response.status_code != 201:
            raise SystemExit(f"registration failed: {response.status_code} {response.content!r}")
        return elapsed

    for _ in range(50):  # warm-up: connections, caches, code paths
        register(None)
        register(uuid.uuid4().hex)
    plain: list[float] = []
    keyed: list[float] = []
    for round_ in range(args.rounds):
        first, second = (plain, keyed) if round_ % 2 == 0 else (keyed, plain)
        for times in (first, second):
            with_key = times is keyed
            times.extend(
                register(uuid.uuid4().hex if with_key else None) for _ in range(args.per_round)
            )
    plain_ms = statistics.mean(plain) * 1000
    keyed_ms = statistics.mean(keyed) * 1000
    share = (keyed_ms - plain_ms) / plain_ms
    median_share = (statistics.median(keyed) - statistics.median(plain)) / statistics.median(plain)
    print(f"registrations: {len(plain)} without a key, {len(keyed)} with a fresh key")
    print(f"mean:   {plain_ms:.2f} ms without, {keyed_ms:.2f} ms with: +{share:.1%}")
    print(f"median: +{median_share:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
