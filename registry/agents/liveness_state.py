"""Liveness as the columns say it: which endpoints are up right now, from their signs of life.
The functions of the columns and their SQL conditions, read by the agent JSON, discovery
and the liveness room (registry.liveness: heartbeats, probes, expiry).

An endpoint is live until ``alive_until``: its last heartbeat or renewal plus its grace
(``liveness_grace``: 2.5 heartbeat intervals for a Persistent endpoint, its TTL for an
Ephemeral one). Never seen: ``unknown``; seen, but the grace ran out: ``stale``. What is
live is decided in SQL from ``alive_until`` (discovery's ``liveOnly``, the ``live``
facet), and the same way here for the JSON of the agents a page shows.
"""

from datetime import datetime

from django.db.models import Exists, OuterRef

from registry.agents.models import Agent, Endpoint

LIVE, STALE, DOWN, UNKNOWN = "live", "stale", "down", "unknown"
HEARTBEAT = "heartbeat"


def endpoint_status(endpoint: Endpoint, now: datetime) -> str:
    if endpoint.alive_until is not None and endpoint.alive_until > now:
        return LIVE
    if endpoint.last_probe_ok is False:
        return DOWN
    return UNKNOWN if endpoint.alive_until is None else STALE


def endpoint_liveness(endpoint: Endpoint, now: datetime) -> dict:
    probe = None
    if endpoint.last_probe_at is not None:
        probe = {
            "at": endpoint.last_probe_at,
            "up": endpoint.last_probe_ok,
            "category": endpoint.last_probe_category,
        }
    return {
        "status": endpoint_status(endpoint, now),
        "lastSeenAt": endpoint.last_alive_at,
        "aliveUntil": endpoint.alive_until,
        "checkedBy": endpoint.checked_by or None,
        "lastProbe": probe,
    }


def agent_uptime(agent: Agent) -> dict | None:
    """The share of successful probes over a day and a week, over the agent's probed
    endpoints (from its prefetched endpoints: no query); None without probes."""
    return endpoints_uptime(agent.endpoints.all())


def endpoints_uptime(endpoints) -> dict | None:
    """agent_uptime over the given endpoints (anything with their uptime attributes)."""
    uptime = {}
    for span, attr in (("day", "uptime_day"), ("week", "uptime_week")):
        shares = [getattr(e, attr) for e in endpoints if getattr(e, attr) is not None]
        uptime[span] = round(sum(shares) / len(shares), 4) if shares else None
    return uptime if uptime["week"] is not None else None


def conformant_agents() -> Exists:
    """The SQL condition "an endpoint's last probe found it answering its protocol"."""
    return Exists(Endpoint.objects.filter(agent=OuterRef("pk"), last_probe_category="ok"))


def agent_live(agent: Agent, now: datetime) -> bool:
    """Any endpoint of the agent live (from its prefetched endpoints: no query)."""
    return endpoints_live(agent.endpoints.all(), now)


def endpoints_live(endpoints, now: datetime) -> bool:
    return any(endpoint_status(e, now) == LIVE for e in endpoints)


def live_agents(now: datetime) -> Exists:
    """The SQL condition "the agent has a live endpoint" (index endpoint_alive)."""
    return Exists(Endpoint.objects.filter(agent=OuterRef("pk"), alive_until__gt=now))


def live_among(agent_ids: list, now: datetime) -> set:
    """Which of these agents are live at ``now`` (live_agents, for a list of ids: one
    probe of endpoint_alive each). PostgreSQL."""
    from django.db import connections

    from registry.fastpath.replicas import read_alias

    table = Endpoint._meta.db_table
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT agent_id FROM {table} WHERE agent_id = ANY(%s) AND alive_until > %s",  # noqa: S608
            [list(agent_ids), now],
        )
        return {row[0] for row in cursor.fetchall()}
