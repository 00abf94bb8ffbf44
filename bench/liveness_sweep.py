"""What announcing liveness changes costs at scale: ``python -m bench.liveness_sweep``
(``--agents``, 100,000 by default, one endpoint each, on a fresh bench database).

Every endpoint is live and announced (``EndpointStatusSeen``); the program then times, each
``--repeat`` times (the median is reported): the sweep with nothing changed (its steady
cost every ``EVENTS_SWEEP_SECONDS``), the stream server's watcher look with no grace ended
(its cost every ``EVENTS_LIVENESS_WATCH_SECONDS``), and the watcher look that finds
``--expired`` graces ended in its window, writing their events.
"""

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from datetime import timedelta

from bench.database import database_reset
from bench.load import database_migrate, django_start


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.liveness_sweep", description=__doc__)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_bench_liveness"
    )
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--expired", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    return parser.parse_args(argv)


def say(message: str) -> None:
    print(f"[bench.liveness_sweep] {message}", file=sys.stderr, flush=True)


def endpoints_load(count: int) -> None:
    """``count`` agents with one live endpoint each, their status announced, in bulk."""
    from django.db import connection
    from django.utils import timezone

    from registry.agents.models import Agent, Endpoint
    from registry.events.models import EndpointStatusSeen

    now = timezone.now()
    for start in range(0, count, 5000):
        size = min(5000, count - start)
        agents = [
            Agent(id=uuid.uuid4(), name=f"Sweep {start + i}", owner="bench", source="native")
            for i in range(size)
        ]
        Agent.objects.bulk_create(agents)
        endpoints = [
            Endpoint(
                id=uuid.uuid4(),
                agent=agent,
                name="web",
                transport="Http",
                protocol="A2A",
                address="https://a.example.com/",
                liveness_grace=timedelta(minutes=10),
                last_alive_at=now,
                alive_until=now + timedelta(minutes=10),
            )
            for agent in agents
        ]
        Endpoint.objects.bulk_create(endpoints)
        EndpointStatusSeen.objects.bulk_create(
            [EndpointStatusSeen(endpoint=e, status="live") for e in endpoints]
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return round(statistics.median(times) * 1000, 1)


def main(argv=None) -> int:
    args = options(argv)
    database_reset(args.database_url)
    django_start(args.database_url)
    database_migrate()
    from django.utils import timezone

    from registry.agents.models import Endpoint
    from registry.discovery.listings import listings_build
    from registry.events.liveness import expiries_write, liveness_changes_write
    from registry.events.models import Event

    def ids_agents(ids: list) -> list:
        return list(Endpoint.objects.filter(pk__in=ids).values_list("agent_id", flat=True))

    say(f"loading {args.agents} agents")
    endpoints_load(args.agents)
    results = {"agents": args.agents}
    results["sweep_nothing_changed_ms"] = timed(liveness_changes_write, args.repeat)

    def look() -> None:
        now = timezone.now()
        expiries_write(now - timedelta(seconds=1), now)

    results["watcher_look_nothing_ended_ms"] = timed(look, args.repeat)
    looks = []
    for _ in range(args.repeat):
        now = timezone.now()
        ids = list(
            Endpoint.objects.filter(alive_until__gt=now).values_list("pk", flat=True)[
                : args.expired
            ]
        )
        listings_build(ids_agents(ids))  # (bulk-loaded agents have none: events carry it)
        Endpoint.objects.filter(pk__in=ids).update(alive_until=now - timedelta(seconds=0.5))
        before = Event.objects.count()
        began = time.perf_counter()
        expiries_write(now - timedelta(seconds=1), timezone.now())
        looks.append(time.perf_counter() - began)
        assert Event.objects.count() - before == len(ids), "each ended grace is one event"
    results[f"watcher_look_{args.expired}_ended_ms"] = round(statistics.median(looks) * 1000, 1)
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
