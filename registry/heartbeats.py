"""The heartbeat's fast path: the hottest write of the registry, in one SQL statement.

``POST /agents/<id>/endpoints/<eid>/heartbeat`` (and ``/renew``, and the agent's
``/heartbeat``) on PostgreSQL: one statement finds the API key by its hash, checks that it
owns the agent (or is an admin key), moves the endpoints' ``alive_until``, records the
key's use (at most once a minute) and returns what the answer shows. No DRF request, no
ORM query building, no audit entry, the agent's ``updatedAt`` untouched. Its commit does
not wait for the write-ahead log to reach the disk (``synchronous_commit`` off for this
transaction alone): a crash may forget the last fraction of a second of heartbeats, which
the next ones restore, and heartbeats no longer queue behind disk flushes.

Anything else falls through to the API view (``registry.api``), which answers the same
way and explains every refusal (401, 403, 404, 429): another database, a malformed key
header, or a statement that changed nothing (a refused heartbeat changes nothing, so the
view may look again).
"""

import functools
import json
import uuid

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from registry.auth import api_key_hash, raw_api_key
from registry.liveness import HEARTBEAT, endpoint_liveness
from registry.models import Agent, ApiKey, Endpoint
from registry.prepared import prepared_cursor
from registry.problems import problem_response
from registry.serializers import liveness_shown
from registry.throttles import heartbeat_ident, window_allows

KEY_USE_SECONDS = 60


@functools.cache
def _statement() -> str:
    # Only the models' table names are formatted in; every value is a parameter.
    endpoint, agent, key = (m._meta.db_table for m in (Endpoint, Agent, ApiKey))
    return f"""
        WITH k AS (
            SELECT id, owner, scope,
                set_config('synchronous_commit', 'off', true) AS commit_mode
            FROM {key}
            WHERE key_hash = %(hash)s AND revoked_at IS NULL
              AND (expires_at IS NULL OR expires_at > %(now)s)
        ), beat AS (
            UPDATE {endpoint} AS e
            SET last_alive_at = %(now)s, alive_until = %(now)s + e.liveness_grace,
                checked_by = %(checked_by)s
            FROM {agent} AS a, k
            WHERE e.agent_id = %(agent)s
              AND (%(endpoint)s::uuid IS NULL OR e.id = %(endpoint)s::uuid)
              AND a.id = e.agent_id
              AND (k.owner = a.owner OR k.scope = %(admin)s)
            RETURNING e.id, e.liveness_grace, e.last_probe_at, e.last_probe_ok,
                e.last_probe_category
        ), used AS (
            UPDATE {key} SET last_used_at = %(now)s
            WHERE id IN (SELECT id FROM k) AND EXISTS (SELECT 1 FROM beat)
              AND (last_used_at IS NULL
                   OR last_used_at < %(now)s - make_interval(secs => %(use_seconds)s))
        )
        SELECT * FROM beat ORDER BY id
    """  # noqa: S608


def heartbeat_fast(
    request: HttpRequest, agent_id: str, endpoint_id: str | None
) -> HttpResponse | None:
    """The heartbeat's answer, or None to let the API view answer (see the module)."""
    if connection.vendor != "postgresql":
        return None
    try:
        raw = raw_api_key(request)
        agent_pk = uuid.UUID(agent_id)
        endpoint_pk = uuid.UUID(endpoint_id) if endpoint_id is not None else None
    except ValueError:
        return None
    if not raw:
        return None
    key_hash = api_key_hash(raw)
    wait = window_allows("heartbeat", heartbeat_ident(key_hash), settings.RATE_LIMIT_HEARTBEAT)
    if wait is not None:
        response = problem_response(429, "throttled", "Too many heartbeats for this API key.")
        response["Retry-After"] = str(int(wait + 0.999))
        return response
    now = timezone.now()
    with prepared_cursor(connections[DEFAULT_DB_ALIAS]) as cursor:
        cursor.execute(
            _statement(),
            {
                "hash": key_hash,
                "now": now,
                "checked_by": HEARTBEAT,
                "agent": agent_pk,
                "endpoint": endpoint_pk,
                "admin": ApiKey.Scope.ADMIN,
                "use_seconds": KEY_USE_SECONDS,
            },
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    answers = []
    for pk, grace, probe_at, probe_ok, probe_category in rows:
        beat = Endpoint(
            pk=pk,
            last_alive_at=now,
            alive_until=now + grace,
            checked_by=HEARTBEAT,
            last_probe_at=probe_at,
            last_probe_ok=probe_ok,
            last_probe_category=probe_category,
        )
        answers.append({"id": pk, "liveness": liveness_shown(endpoint_liveness(beat, now))})
    body = (
        answers[0]
        if endpoint_id is not None
        else {"agentId": agent_pk, "live": True, "endpoints": answers}
    )
    return HttpResponse(
        json.dumps(body, cls=DjangoJSONEncoder, separators=(",", ":")),
        content_type="application/json",
    )
