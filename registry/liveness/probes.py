"""Active probes: the registry checks that Persistent http(s) endpoints answer.

Every probe goes through the one safe fetcher (https, public addresses only, time and
size limits). An endpoint is up when it answers with a non-5xx HTTP status; down on 5xx,
TLS and connection errors and timeouts. A protocol app may probe its protocol's endpoints
its own way (registry.extensions ``register_prober``: A2A checks the card and makes a
side-effect-free A2A call). A success keeps the endpoint live for 2.5 probe intervals;
each outcome is kept (``ProbeResult``, for a week) and counted into the endpoint's uptime.
"""

import logging
import random
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Avg, Case, FloatField, Q, When
from django.utils import timezone

from registry import extensions
from registry.agents.models import HEARTBEAT_GRACE_FACTOR, Agent, Endpoint
from registry.liveness.models import ProbeResult
from registry.outbound.fetch import FetchError, fetch
from registry.signals import endpoints_liveness_written, probes_written

logger = logging.getLogger(__name__)

PROBE = "probe"
HISTORY_DAYS = 7
# FetchError reasons, as probe categories.
CATEGORIES = {
    "timeout": "timeout",
    "dns-failure": "dns",
    "tls-error": "tls",
    "connect-failed": "connect",
    "protocol-error": "connect",
    "blocked-address": "refused",
    "scheme-not-allowed": "refused",
    "invalid-url": "refused",
}


# The task probe's checks (a real request to the agent, where its owner opted in or
# TRUST_TASK_PROBE=all): its card is reachable, TLS valid, the binding answers, in a well-
# formed protocol answer, a task's lifecycle holds (a task sent back is found by its id),
# and the authentication it declares is the one it requires.
TASK_CHECKS = ("card", "tls", "binding", "wellFormed", "taskLifecycle", "auth")


@dataclass(frozen=True)
class TaskCheck:
    """One check of the task probe: its name (TASK_CHECKS), whether it passed, and why."""

    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class ProbeOutcome:
    """What one probe found: ``ok`` the endpoint is up; ``category`` ok, not_a2a,
    http_error, timeout, dns, tls, connect or refused; the HTTP status when one came; the
    digest of the agent's card as published, and whether it differs from the stored one."""

    ok: bool
    category: str
    detail: str
    status: int | None = None
    card_digest: str = ""
    card_changed: bool = False
    # What the task probe found, when it ran, and the certificate's expiry where seen.
    checks: tuple[TaskCheck, ...] = ()
    cert_expires_at: datetime | None = None


def outcome_of_error(exc: FetchError) -> ProbeOutcome:
    if exc.reason == "http-status" and exc.status is not None:
        up = exc.status < 500
        return ProbeOutcome(up, "ok" if up else "http_error", exc.detail, exc.status)
    if exc.reason in ("too-large", "not-json", "invalid-json"):
        return ProbeOutcome(True, "ok", exc.detail)  # it answered
    return ProbeOutcome(False, CATEGORIES.get(exc.reason, "connect"), exc.detail)


def http_probe(endpoint: Endpoint) -> ProbeOutcome:
    """Any endpoint with an http(s) address: up when it answers below 500."""
    try:
        result = fetch(
            endpoint.address,
            accept_json=False,
            max_bytes=64 * 1024,
            timeout=settings.PROBE_TIMEOUT_SECONDS,
        )
    except FetchError as exc:
        return outcome_of_error(exc)
    return ProbeOutcome(
        True,
        "ok",
        f"answered with HTTP status {result.status}",
        result.status,
        cert_expires_at=result.cert_expires_at,
    )


def task_probe_due(endpoint: Endpoint, now: datetime) -> bool:
    """Whether a prober also sends the endpoint a real request now (a protocol app's task
    probe): the switch (TRUST_TASK_PROBE), the owner's consent (``Agent.task_probe``) and
    the interval since the endpoint's last task probe."""
    mode = settings.TRUST_TASK_PROBE
    if mode == "off":
        return False
    if mode == "opt-in":
        consent = Agent.objects.filter(pk=endpoint.agent_id).values_list("task_probe", flat=True)
        if not consent.first():
            return False
    since = now - timedelta(seconds=settings.TRUST_TASK_PROBE_INTERVAL_SECONDS)
    return not ProbeResult.objects.filter(
        endpoint_id=endpoint.pk, at__gt=since, task_check__in=("tls", "binding")
    ).exists()


def probe_one(endpoint: Endpoint) -> ProbeOutcome:
    prober = extensions.probers.get(endpoint.protocol, http_probe)
    try:
        return prober(endpoint)
    except Exception:  # a prober's bug must not stop the other probes
        logger.exception("Probing endpoint %s failed", endpoint.pk)
        return ProbeOutcome(False, "connect", "the probe itself failed")


def probeable() -> Q:
    """Persistent HTTP endpoints with an http(s) address, or of a protocol whose app
    registered a prober (it reaches what else its protocol names: an A2A gRPC authority,
    ``host:port``): the ones probes reach."""
    return Q(
        liveness_model=Endpoint.Liveness.PERSISTENT,
        transport=Endpoint.Transport.HTTP,
    ) & (Q(address__startswith="http") | Q(protocol__in=sorted(extensions.probers)))


def endpoint_probe_store(
    endpoint: Endpoint, outcome: ProbeOutcome, *, at: datetime, latency_ms: int
) -> ProbeResult:
    """Keep a probe's outcome, its effect on liveness (a success keeps the endpoint live
    for 2.5 probe intervals; a failure ends what probes had granted) and the uptime."""
    interval = timedelta(seconds=settings.PROBE_INTERVAL_SECONDS)
    jitter = timedelta(seconds=random.uniform(0, interval.total_seconds() / 10))  # noqa: S311
    fields = {
        "last_probe_at": at,
        "last_probe_ok": outcome.ok,
        "last_probe_category": outcome.category,
        "next_probe_at": at + interval + jitter,
    }
    with transaction.atomic():
        result = ProbeResult.objects.create(
            endpoint_id=endpoint.pk,
            agent_id=endpoint.agent_id,
            at=at,
            ok=outcome.ok,
            category=outcome.category,
            status_code=outcome.status,
            latency_ms=latency_ms,
            detail=outcome.detail[:300],
            card_digest=outcome.card_digest,
            card_changed=outcome.card_changed,
            cert_expires_at=outcome.cert_expires_at,
        )
        ProbeResult.objects.bulk_create(
            ProbeResult(
                endpoint_id=endpoint.pk,
                agent_id=endpoint.agent_id,
                at=at,
                ok=check.ok,
                category="ok" if check.ok else "failed",
                detail=check.detail[:300],
                cert_expires_at=outcome.cert_expires_at,
                task_check=check.name,
            )
            for check in outcome.checks
        )
        current = Endpoint.objects.filter(pk=endpoint.pk)
        if outcome.ok:
            until = at + interval * HEARTBEAT_GRACE_FACTOR
            current.filter(Q(alive_until__isnull=True) | Q(alive_until__lt=until)).update(
                alive_until=until, last_alive_at=at, checked_by=PROBE
            )
        else:
            current.filter(checked_by=PROBE, alive_until__gt=at).update(alive_until=at)
        current.update(**fields, **_uptime(endpoint.pk, at))
        endpoints_liveness_written.send(sender=None, endpoint_ids=[endpoint.pk])
    return result


def _uptime(endpoint_id, at: datetime) -> dict[str, float | None]:
    share = Avg(Case(When(ok=True, then=1.0), default=0.0, output_field=FloatField()))
    probes = ProbeResult.objects.filter(endpoint_id=endpoint_id, task_check="")
    return {
        "uptime_day": probes.filter(at__gt=at - timedelta(days=1)).aggregate(v=share)["v"],
        "uptime_week": probes.filter(at__gt=at - timedelta(days=7)).aggregate(v=share)["v"],
    }


def endpoints_probe(endpoints: Iterable[Endpoint]) -> list[tuple[Endpoint, ProbeResult]]:
    """Probe the endpoints, PROBE_CONCURRENCY at a time, and store each outcome."""

    def run(endpoint: Endpoint) -> tuple[Endpoint, ProbeResult]:
        began = time.monotonic()
        outcome = probe_one(endpoint)
        latency = int((time.monotonic() - began) * 1000)
        return endpoint, endpoint_probe_store(
            endpoint, outcome, at=timezone.now(), latency_ms=latency
        )

    def run_in_thread(endpoint: Endpoint) -> tuple[Endpoint, ProbeResult]:
        try:
            return run(endpoint)
        finally:
            connection.close()  # each thread's own connection

    endpoints = list(endpoints)
    if settings.PROBE_CONCURRENCY <= 1 or len(endpoints) <= 1:
        probed = [run(endpoint) for endpoint in endpoints]
    else:
        with ThreadPoolExecutor(max_workers=settings.PROBE_CONCURRENCY) as pool:
            probed = list(pool.map(run_in_thread, endpoints))
    if probed:
        agent_ids = sorted({endpoint.agent_id for endpoint, _ in probed}, key=str)
        probes_written.send(sender=None, agent_ids=agent_ids)
    return probed


def history_days() -> int:
    """How long probe history is kept: a week, or the trust score's window when longer."""
    return max(HISTORY_DAYS, getattr(settings, "TRUST_HISTORY_DAYS", HISTORY_DAYS))


def endpoints_probe_due(*, now: datetime | None = None) -> int:
    """Probe the endpoints whose probe is due, PROBE_BATCH at the most (a first sweep
    spreads over several runs), and drop probe history older than a week."""
    now = now or timezone.now()
    due = (
        Endpoint.objects.filter(probeable())
        .exclude(agent__status=Agent.Status.RETIRED)  # a retired agent is not watched
        .filter(Q(next_probe_at__isnull=True) | Q(next_probe_at__lte=now))
        .order_by("next_probe_at", "pk")[: settings.PROBE_BATCH]
    )
    probed = endpoints_probe(due)
    ProbeResult.objects.filter(at__lt=now - timedelta(days=history_days())).delete()
    return len(probed)
