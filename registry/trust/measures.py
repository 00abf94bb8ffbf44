"""The core's trust signals, each read for many agents at once from what the probes
(``registry.liveness``) and the agents' rows show: conformance, uptime, TLS, time in the
registry and crawl history. Registered from ``RegistryConfig.ready()``."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Q
from django.utils import timezone

from registry.agents.models import Agent, Endpoint
from registry.extensions import TrustSignal
from registry.liveness.models import ProbeResult

# Probe categories that say the endpoint could not be reached at all.
UNREACHED = ("timeout", "dns", "tls", "connect", "refused")
# What the signals of one recomputation share: each read once for all of them.
_shared: ContextVar[dict | None] = ContextVar("trust_reads", default=None)


@contextmanager
def reads_shared() -> Iterator[None]:
    """Inside: the signals read the probes of the same agents once."""
    token = _shared.set({})
    try:
        yield
    finally:
        _shared.reset(token)


def _once(name: str, read, agent_ids: list) -> dict:
    shared = _shared.get()
    if shared is None:
        return read(agent_ids)
    key = (name, tuple(agent_ids))
    if key not in shared:
        shared[key] = read(agent_ids)
    return shared[key]


def _history(agent_ids: list) -> dict:
    return _once("history", _history_read, agent_ids)


def _last_probes(agent_ids: list) -> dict:
    return _once("last", _last_probes_read, agent_ids)


def _history_read(agent_ids: list) -> dict:
    """Per agent, its probes of the last TRUST_HISTORY_DAYS counted: in all, up, answering
    their protocol, reached, with the card fetched, with the card changed."""
    since = timezone.now() - timedelta(days=settings.TRUST_HISTORY_DAYS)
    rows = (
        ProbeResult.objects.filter(agent_id__in=agent_ids, at__gte=since, task_check="")
        .order_by()
        .values("agent_id")
        .annotate(
            count=Count("id"),
            up=Count("id", filter=Q(ok=True)),
            conformant=Count("id", filter=Q(category="ok")),
            unreached=Count("id", filter=Q(category__in=UNREACHED)),
            fetched=Count("id", filter=~Q(card_digest="")),
            changed=Count("id", filter=Q(card_changed=True)),
            cert_expires=Max("cert_expires_at"),
        )
    )
    return {row["agent_id"]: row for row in rows}


def _last_probes_read(agent_ids: list) -> dict:
    """Per agent, its probed endpoints' last outcomes: [(address, ok, category)]."""
    found: dict = {}
    rows = Endpoint.objects.filter(agent_id__in=agent_ids, last_probe_at__isnull=False)
    for agent_id, address, ok, category in rows.order_by().values_list(
        "agent_id", "address", "last_probe_ok", "last_probe_category"
    ):
        found.setdefault(agent_id, []).append((address, ok, category))
    return found


def conformance(agent_ids: list) -> dict:
    """Half the last probes (every probed endpoint answered its protocol), half the share
    of the window's probes that did."""
    history, last = _history(agent_ids), _last_probes(agent_ids)
    values = {}
    for agent_id in agent_ids:
        probes, latest = history.get(agent_id), last.get(agent_id)
        if not probes or not latest:
            values[agent_id] = (0.0, {"probes": 0})
            continue
        now_ok = all(category == "ok" for _, _, category in latest)
        share = probes["conformant"] / probes["count"]
        detail = {"last": now_ok, "share": round(share, 3), "probes": probes["count"]}
        values[agent_id] = ((float(now_ok) + share) / 2, detail)
    return values


def uptime(agent_ids: list) -> dict:
    """The share of the window's probes that found the agent up."""
    values = {}
    for agent_id, probes in _history(agent_ids).items():
        share = probes["up"] / probes["count"]
        values[agent_id] = (share, {"share": round(share, 3), "probes": probes["count"]})
    return values


def tls(agent_ids: list) -> dict:
    """Every probed https endpoint's TLS held at its last probe, and the certificate has
    TRUST_TLS_FULL_DAYS or more to run (less: in proportion; unknown expiry: in full)."""
    history, last = _history(agent_ids), _last_probes(agent_ids)
    now = timezone.now()
    values = {}
    for agent_id, latest in last.items():
        https = [(ok, category) for address, ok, category in latest if address.startswith("https:")]
        if not https:
            continue
        valid = all(category != "tls" for _, category in https) and any(ok for ok, _ in https)
        expires = (history.get(agent_id) or {}).get("cert_expires")
        days = _days_to(expires, now)
        value = float(valid)
        if valid and days is not None:
            value = max(0.0, min(1.0, days / max(settings.TRUST_TLS_FULL_DAYS, 1)))
        values[agent_id] = (value, {"valid": valid, "daysToExpiry": days})
    return values


def _days_to(when: datetime | None, now: datetime) -> int | None:
    return None if when is None else int((when - now).total_seconds() // 86400)


def age(agent_ids: list) -> dict:
    """Time in the registry: in full after TRUST_AGE_FULL_DAYS."""
    now, full = timezone.now(), max(settings.TRUST_AGE_FULL_DAYS, 1)
    values = {}
    for agent_id, created in Agent.objects.filter(pk__in=agent_ids).values_list("pk", "created_at"):
        days = max(0, (now - created).days)
        values[agent_id] = (min(1.0, days / full), {"days": days})
    return values


def crawl_history(agent_ids: list) -> dict:
    """Half the card's bytes stable where the probes fetched it (none fetched: stable),
    half the share of the window's probes that reached the agent."""
    values = {}
    for agent_id, probes in _history(agent_ids).items():
        reached = 1 - probes["unreached"] / probes["count"]
        stable = 1 - probes["changed"] / probes["fetched"] if probes["fetched"] else 1.0
        detail = {
            "cardChanges": probes["changed"],
            "fetchFailures": probes["unreached"],
            "probes": probes["count"],
        }
        values[agent_id] = ((stable + reached) / 2, detail)
    return values


def task_probe(agent_ids: list) -> dict:
    """The share of the checks its latest task probe passed (a real request: the card,
    TLS, the binding, a well-formed answer, the task's lifecycle, the declared
    authentication); nothing for an agent never so probed."""
    since = timezone.now() - timedelta(days=settings.TRUST_HISTORY_DAYS)
    rows = (
        ProbeResult.objects.filter(agent_id__in=agent_ids, at__gte=since)
        .exclude(task_check="")
        .order_by("agent_id", "-at")
        .values_list("agent_id", "at", "task_check", "ok")
    )
    latest: dict = {}
    for agent_id, at, check, ok in rows:
        first = latest.setdefault(agent_id, (at, {}))
        if at == first[0]:
            first[1][check] = first[1].get(check, True) and ok
    values = {}
    for agent_id, (_, checks) in latest.items():
        passed = sum(1 for ok in checks.values() if ok)
        failed = sorted(name for name, ok in checks.items() if not ok)
        values[agent_id] = (passed / len(checks), {"passed": passed, "failed": failed})
    return values


SIGNALS = [
    TrustSignal(
        "conformance",
        conformance,
        "The endpoints answer their protocol: the last probes, and their share over the window.",
    ),
    TrustSignal("uptime", uptime, "The share of the window's probes that found it up."),
    TrustSignal("tls", tls, "TLS valid at the last probe, and the certificate's days to run."),
    TrustSignal("age", age, "Time in the registry."),
    TrustSignal(
        "taskProbe",
        task_probe,
        "The share of the checks its latest task probe (a real request) passed.",
        missing=None,
    ),
    TrustSignal(
        "crawlHistory",
        crawl_history,
        "The card's bytes stable where it was published, and fetches that reached it.",
    ),
]
