"""The bench's own Django: migrate the bench database and bulk-load generated cards into it."""

import os
import sys
import time
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.database import BenchError
from bench.generate import card_generate, cards_generate

ROOT = Path(__file__).resolve().parent.parent
OWNER = "bench"
# The share of endpoints with a recent heartbeat when discovery is measured (liveOnly).
LIVE_SHARE = 0.3
BASE_URL = "https://registry.bench.example"


@dataclass
class LoadPhase:
    phase: str
    agents: int
    seconds: float
    method: str

    @property
    def rate(self) -> float:
        return self.agents / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agents_per_second": round(self.rate, 1)}


def django_start(database_url: str) -> None:
    """Configure Django for the bench database; settings read the environment once."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "registry.settings"
    os.environ["DATABASE_URL"] = database_url
    os.environ["DEBUG"] = "0"
    os.environ["REGISTRY_BASE_URL"] = BASE_URL
    os.environ["SECRET_KEY"] = "bench"
    os.environ["LOG_LEVEL"] = "WARNING"
    # The generated endpoints are on reserved names (``.example``, RFC 2606) that never
    # resolve: asking DNS about them measures this machine's resolver, not the registry
    # (here, at 32 side by side, about 35 names a second, a rate limit's timeouts). The
    # scanners' other rules run; SCAN_RESOLVE_HOSTS=1 in the environment asks anyway.
    os.environ.setdefault("SCAN_RESOLVE_HOSTS", "false")
    import django

    django.setup()


def database_migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def database_info() -> dict[str, str]:
    from django.db import connection

    info = {"vendor": connection.vendor}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SHOW server_version")
            info["version"] = cursor.fetchone()[0]
            # The 100,000-agent rows read their tables through it (bench/README.md).
            cursor.execute("SHOW shared_buffers")
            info["shared_buffers"] = cursor.fetchone()[0]
        else:
            cursor.execute("SELECT sqlite_version()")
            info["version"] = cursor.fetchone()[0]
    return info


def database_analyze() -> None:
    """Planner statistics and visibility maps, as autovacuum would give a loaded database.

    On PostgreSQL a VACUUM too: left to autovacuum, it would run during the measurements.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)" if connection.vendor == "postgresql" else "ANALYZE")


def cards_check(seed: int, total: int, sample: int = 300) -> int:
    """Every generated card the registry would accept: checked on a spread-out sample."""
    from protocols.a2a.cards.validation import card_validate

    step = max(1, total // sample)
    checked = 0
    for index in range(0, total, step):
        report = card_validate(card_generate(seed, index))
        if not report.ok:
            problems = "; ".join(f"{p.path} {p.message}" for p in report.errors)
            raise BenchError(f"generated card {index} is invalid: {problems}")
        checked += 1
    return checked


def agents_load(*, phase: str, seed: int, start: int, stop: int, batch_size: int) -> LoadPhase:
    """Load cards start..stop-1 as ``manage.py import_cards`` does (its processes, one per
    core up to its maximum); the cards are generated while the processes import."""
    from protocols.a2a.management.commands.import_cards import PROCESSES_MAX
    from protocols.a2a.registration.bulk import cards_import_processes

    processes = min(os.cpu_count() or 1, PROCESSES_MAX)
    method = f"cards_import_processes, {processes} processes"

    def progress(created: int, seen: int) -> None:
        rate = created / (time.perf_counter() - began)
        print(
            f"  loaded {created}/{stop - start} agents ({rate:.0f}/s, {method})",
            file=sys.stderr,
            flush=True,
        )

    began = time.perf_counter()
    outcome = cards_import_processes(
        owner=OWNER,
        cards=cards_generate(seed, start, stop),
        batch=batch_size,
        processes=processes,
        on_batch=progress,
    )
    seconds = time.perf_counter() - began
    if outcome.failure is not None:
        raise BenchError(f"the load was refused: {outcome.failure.detail}")
    _agents_count_check(stop)
    return LoadPhase(phase=phase, agents=stop - start, seconds=round(seconds, 3), method=method)


def _agents_count_check(expected: int) -> None:
    from registry.agents.models import Agent

    count = Agent.objects.count()
    if count != expected:
        raise BenchError(f"expected {expected} agents in the database after loading, found {count}")


def card_paths() -> list[str]:
    """The card URL of every publicly listed agent that has a card (the public rows: with
    ``--private-share``, the private agents' cards are left out)."""
    from protocols.a2a.models import CardDocument

    ids = CardDocument.objects.filter(listed=True).order_by().values_list("agent_id", flat=True)
    return [f"/a2a/agents/{agent_id}" for agent_id in ids.iterator(chunk_size=10_000)]


def api_key(owner: str = OWNER) -> str:
    """A new API key of the agents' owner, for the heartbeat requests."""
    from registry.access.keys import api_key_create

    return api_key_create(owner=owner, label="bench")[1]


def heartbeat_paths(seed: int, count: int = 20_000, *, live: bool = True) -> list[str]:
    """``POST`` heartbeat requests of ``count`` endpoints picked at random: of endpoints that
    are live (``endpoints_make_live``: agents that beat, whose heartbeats keep them live), or
    with ``live`` False of endpoints that are not (each heartbeat revives one)."""
    import random

    from django.db.models import Q
    from django.utils import timezone

    from registry.agents.models import Endpoint

    alive = Q(alive_until__gt=timezone.now())
    rows = Endpoint.objects.filter(alive if live else ~alive | Q(alive_until__isnull=True))
    rows = rows.order_by("pk").values_list("agent_id", "pk")
    rows = list(rows.iterator(chunk_size=10_000))
    picked = random.Random(f"{seed}-heartbeat").sample(rows, min(count, len(rows)))
    return [f"POST /agents/{agent}/endpoints/{endpoint}/heartbeat" for agent, endpoint in picked]


def endpoints_make_live(seed: int, share: float = LIVE_SHARE) -> int:
    """Give ``share`` of the endpoints (picked at random, the same ones at every size) a
    recent heartbeat, as a registry with agents beating would have: what liveOnly keeps."""
    import random

    from django.utils import timezone

    from registry.agents.models import Endpoint
    from registry.liveness.services import endpoints_heartbeat

    ids = list(Endpoint.objects.order_by("pk").values_list("pk", flat=True).iterator(10_000))
    rng = random.Random(f"{seed}-live")
    live = [pk for pk in ids if rng.random() < share]
    # A day's grace: the endpoints stay live through the whole run.
    now = timezone.now() + timedelta(days=1)
    for start in range(0, len(live), 2000):
        endpoints_heartbeat(Endpoint.objects.filter(pk__in=live[start : start + 2000]), now)
    return len(live)


def trust_spread(seed: int) -> int:
    """Give the agents trust scores spread from 0 to 100 (at random, the same at every
    size), as a registry whose agents were probed for weeks would have: what minTrust and
    sort=trust read. Only the indexed score is set (the stored listings keep theirs): the
    rows measure the filter and the order, not the bodies."""
    import random

    from registry.agents.models import Agent

    ids = list(Agent.objects.order_by("pk").values_list("pk", flat=True).iterator(10_000))
    rng = random.Random(f"{seed}-trust")
    by_score: dict[int, list] = {}
    for pk in ids:
        by_score.setdefault(rng.randrange(101), []).append(pk)
    for score, agents in by_score.items():
        for start in range(0, len(agents), 2000):
            Agent.objects.filter(pk__in=agents[start : start + 2000]).update(trust_score=score)
    return len(ids)


def agents_make_private(seed: int, share: float) -> int:
    """Make ``share`` of the agents private (each picked by a digest of its id: the same
    ones at every size), through the owner's write (registry.agents.visibility), as a
    registry whose owners keep some agents to themselves would have; the public rows then
    measure the public path beside them. The agents made private now."""
    import hashlib

    from django.db import transaction

    from registry.agents.models import Agent
    from registry.agents.visibility import agent_visibility_change

    def picked(pk) -> bool:
        digest = hashlib.sha256(f"{seed}-private-{pk}".encode()).digest()
        return int.from_bytes(digest[:4], "big") < share * 2**32

    public = Agent.objects.filter(visibility=Agent.Visibility.PUBLIC).order_by("pk")
    ids = [pk for pk in public.values_list("pk", flat=True).iterator(10_000) if picked(pk)]
    for start in range(0, len(ids), 500):
        with transaction.atomic():
            for agent in Agent.objects.filter(pk__in=ids[start : start + 500]):
                agent_visibility_change(agent=agent, asked=(Agent.Visibility.PRIVATE, []))
    return len(ids)
