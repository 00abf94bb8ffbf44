"""Liveness's writes: a heartbeat's one UPDATE, and the expiry of Ephemeral endpoints
through the agents' services."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, F, Q, QuerySet, Value
from django.utils import timezone

from registry.access.audit import audit_actor
from registry.agents import removal, services
from registry.agents.liveness_state import HEARTBEAT
from registry.agents.models import Agent, Endpoint
from registry.http.problems import ProblemError

logger = logging.getLogger(__name__)


def endpoints_heartbeat(endpoints: QuerySet[Endpoint], now: datetime) -> int:
    """Record a sign of life of the endpoints: one UPDATE, nothing else (no audit entry, no
    card rebuilt, the agent's updatedAt and the change feed untouched); how many."""
    return endpoints.update(
        last_alive_at=now,
        alive_until=Value(now, output_field=DateTimeField()) + F("liveness_grace"),
        checked_by=HEARTBEAT,
    )


def endpoints_expire(*, now: datetime | None = None) -> tuple[int, int]:
    """Remove the Ephemeral endpoints whose TTL ran out more than EPHEMERAL_RETENTION_SECONDS
    ago (never renewed: counted from their registration), and the agents left without an
    endpoint, through the services (audit entries, tombstones, cards kept current).
    Returns (endpoints removed, agents removed)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.EPHEMERAL_RETENTION_SECONDS)
    candidates = (
        Endpoint.objects.filter(liveness_model=Endpoint.Liveness.EPHEMERAL)
        .filter(Q(alive_until__lt=cutoff) | Q(alive_until__isnull=True, created_at__lt=cutoff))
        .exclude(agent__status=Agent.Status.RETIRED)  # kept as retired: its history stays
    )
    expired: dict = {}
    for endpoint in candidates.only(
        "id", "agent_id", "alive_until", "created_at", "liveness_grace"
    ):
        # Never renewed: its first TTL, counted from its registration, then the retention.
        if (
            endpoint.alive_until is not None
            or endpoint.created_at + endpoint.liveness_grace < cutoff
        ):
            expired.setdefault(endpoint.agent_id, set()).add(endpoint.pk)
    token = audit_actor.set(("system:liveness", ""))
    endpoints = agents = 0
    try:
        for agent_id, gone in expired.items():
            try:
                with transaction.atomic():
                    agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
                    if agent is None:
                        continue
                    remaining = set(agent.endpoints.values_list("pk", flat=True))
                    if remaining <= gone:
                        removal.agent_delete(agent=agent)
                        agents += 1
                    else:
                        for endpoint in agent.endpoints.filter(pk__in=gone):
                            services.endpoint_remove(endpoint=endpoint)
                    endpoints += len(remaining & gone)
            except ProblemError as exc:  # a protocol app refused (a card-managed agent)
                logger.warning("Expired endpoints of agent %s kept: %s", agent_id, exc)
    finally:
        audit_actor.reset(token)
    return endpoints, agents
