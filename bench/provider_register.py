"""What a provider registration costs: ``python -m bench.provider_register``.

``POST /v1/provider/register`` (the whole Django stack, in process) on a bench database it
creates afresh, for a provider with ``--entities`` entities: new claims (written in bulk),
the same registration again (unchanged claims are left alone), the registration with 20
claims renamed (changed claims are written one by one), and, past
``PROVIDER_REGISTER_NOW``, the time to the 202 of a registration queued as a job. Prints
each time and the cost per entity of a new claim against a changed one, from the same run.
"""

import argparse
import os
import sys
import tempfile
import time


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.provider_register", description=__doc__)
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/registry_bench_provider",
        help="a database whose name contains 'bench' (dropped and created afresh)",
    )
    parser.add_argument("--entities", type=int, default=1000)
    return parser.parse_args(argv)


def registration(provider: str, count: int, suffix: str = "") -> dict:
    return {
        "provider": {
            "id": provider,
            "name": "Bench Bookings",
            "endpoint": f"https://mcp.{provider}.example.com",
            "capabilities": ["reservations"],
        },
        "entities": [
            {
                "entity_id": f"e-{n}",
                "name": f"Bistro {n}{suffix if n < 20 else ''}",
                "domain": f"bistro-{n}.example",
                "category": "restaurant",
                "location": {"city": "Lyon", "country": "FR"},
            }
            for n in range(count)
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
        SECRET_KEY="bench-provider-register",
        REGISTRY_BASE_URL="http://127.0.0.1:8000",
        ALLOWED_HOSTS="testserver",
        RATE_LIMIT_WRITE="1000000/min",
        RATE_LIMIT_READ="1000000/min",
        # Every registration here is answered within its request, but the last.
        PROVIDER_REGISTER_NOW=str(args.entities),
        CELERY_TASK_ALWAYS_EAGER="0",
        REGISTRY_VAR_DIR=tempfile.mkdtemp(prefix="bench-provider-"),  # the queued job's file
    )
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from registry.access.keys import api_key_create

    call_command("migrate", verbosity=0)
    _, key = api_key_create(owner="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def post(payload: dict, status: int) -> float:
        started = time.perf_counter()
        response = client.post("/v1/provider/register", payload, content_type="application/json")
        elapsed = time.perf_counter() - started
        if response.status_code != status:
            raise SystemExit(f"{response.status_code}, not {status}: {response.content[:300]!r}")
        return elapsed

    count = args.entities
    new = post(registration("bench-a", count), 201)
    same = post(registration("bench-a", count), 200)
    changed = post(registration("bench-a", count, " (renamed)"), 200)
    settings.PROVIDER_REGISTER_NOW = 10
    # Queued, not run: no worker takes it here (the job queue's broker keeps it).
    queued = post(registration("bench-b", count), 202)
    print(f"{count} new claims: {new:.2f} s ({new / count * 1000:.1f} ms each)")
    print(f"the same {count} again: {same:.2f} s")
    print(f"20 of them changed: {changed:.2f} s ({changed / 20 * 1000:.1f} ms each)")
    print(f"{count} as a job, to the 202: {queued:.2f} s")
    print(f"a changed claim costs {changed / 20 / (new / count):.1f} x a new one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
