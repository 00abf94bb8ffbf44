"""The heartbeat's fast path: the hottest write of the registry, in one SQL statement.

``POST /agents/<id>/endpoints/<eid>/heartbeat`` (and ``/renew``, and the agent's
``/heartbeat``) on PostgreSQL: one statement finds the API key by its hash, checks that it
owns the agent (or is an admin key), moves the endpoints' ``alive_until``, records the
key's use (at most once a minute) and returns what the answer shows. No DRF request, no
ORM query building, no audit entry, the agent's ``updatedAt`` untouched. The statement is
prepared once per connection and run through libpq directly, its values in binary
(``registry.fastpath.prepared.prepared_rows``). Its commit does not wait for the write-ahead log to
reach the disk (``synchronous_commit`` off for this transaction alone): a crash may forget
the last fraction of a second of heartbeats, which the next ones restore, and heartbeats
no longer queue behind disk flushes.

It runs on the lean lane (``heartbeat_lean``, before Django builds a request) and, for
requests that reach Django another way, in the API view's dispatch (``heartbeat_fast``);
both count the key's heartbeat limit once per request (``registry.access.throttles``). Anything
else falls through to the API view (``registry.liveness.api``), which answers the same way and
explains every refusal (401, 403, 404, 429): another database, a malformed key header or
path, a key over its limit, or a statement that changed nothing (a refused heartbeat
changes nothing, so the view may look again; a retired agent's heartbeats change nothing,
and the view answers them 410 Gone). The statement keeps alive only endpoints
that are live: one that is not (its grace ran out, never seen) is revived by the view, whose
transaction also writes the liveness status change (``endpoints_liveness_written``), so a
status change is never a heartbeat of the fast path. The heartbeat takes no request body:
the lane, as the view, never reads one.
"""

import functools
import json
import uuid
from types import SimpleNamespace

from django.db import DEFAULT_DB_ALIAS, connections
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from registry.access.auth import api_key_hash, raw_api_key_of
from registry.access.counters import auth_failure_wait
from registry.access.models import ApiKey
from registry.access.throttles import heartbeat_wait
from registry.agents.liveness_state import HEARTBEAT, endpoint_liveness
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import liveness_shown
from registry.fastpath.lean import LeanAnswer
from registry.fastpath.prepared import postgres_timestamp, postgres_timestamp_bytes, prepared_rows
from registry.http.problems import problem_response

KEY_USE_SECONDS = 60

_JSON = [("Content-Type", "application/json")]
# The parameters' types: the key's hash (inferred), now, the agent, the endpoint or NULL.
_TYPES = [0, 1184, 2950, 2950]  # -, timestamptz, uuid, uuid


@functools.cache
def _statement() -> str:
    # Only the models' table names and the code's constants are formatted in; every value
    # of the request is a parameter.
    endpoint, agent, key = (m._meta.db_table for m in (Endpoint, Agent, ApiKey))
    return f"""
        WITH k AS (
            SELECT id, owner, scope,
                set_config('synchronous_commit', 'off', true) AS commit_mode
            FROM {key}
            WHERE key_hash = $1 AND revoked_at IS NULL
              AND (expires_at IS NULL OR expires_at > $2)
        ), beat AS (
            UPDATE {endpoint} AS e
            SET last_alive_at = $2, alive_until = $2 + e.liveness_grace,
                checked_by = '{HEARTBEAT}'
            FROM {agent} AS a, k
            WHERE e.agent_id = $3
              AND ($4::uuid IS NULL OR e.id = $4::uuid)
              AND a.id = e.agent_id
              AND a.status <> '{Agent.Status.RETIRED.value}'
              AND (k.owner = a.owner OR k.scope = '{ApiKey.Scope.ADMIN.value}')
              AND NOT EXISTS (
                  SELECT 1 FROM {endpoint} AS o
                  WHERE o.agent_id = $3 AND ($4::uuid IS NULL OR o.id = $4::uuid)
                    AND (o.alive_until IS NULL OR o.alive_until <= $2)
              )
            RETURNING e.id, e.alive_until, e.last_probe_at, e.last_probe_ok,
                e.last_probe_category
        ), used AS (
            UPDATE {key} SET last_used_at = $2
            WHERE id IN (SELECT id FROM k) AND EXISTS (SELECT 1 FROM beat)
              AND (last_used_at IS NULL
                   OR last_used_at < $2 - interval '{KEY_USE_SECONDS} seconds')
        )
        SELECT * FROM beat ORDER BY id
    """  # noqa: S608


def _heartbeat_parsed(meta, agent_id: str, endpoint_id: str | None):
    """The key's hash and the ids, or None for what only the view may answer."""
    try:
        raw = raw_api_key_of(meta)
        agent_pk = uuid.UUID(agent_id)
        endpoint_pk = uuid.UUID(endpoint_id) if endpoint_id is not None else None
    except ValueError:
        return None
    if not raw:
        return None
    return api_key_hash(raw), agent_pk, endpoint_pk


def _heartbeat_body(key_hash: str, agent_pk: uuid.UUID, endpoint_pk: uuid.UUID | None):
    """Send the heartbeat: the answer's JSON, or None if it changed nothing."""
    now = timezone.now()
    params = [
        key_hash.encode(),
        postgres_timestamp_bytes(now),
        agent_pk.bytes,
        endpoint_pk.bytes if endpoint_pk is not None else None,
    ]
    db = connections[DEFAULT_DB_ALIAS]
    rows = prepared_rows(db, "registry_heartbeat", _statement(), params, _TYPES)
    if not rows:
        return None
    answers = []
    for pk, alive_until, probe_at, probe_ok, probe_category in rows:
        beat = SimpleNamespace(  # what endpoint_liveness reads of an Endpoint
            last_alive_at=now,
            alive_until=postgres_timestamp(alive_until),
            checked_by=HEARTBEAT,
            last_probe_at=postgres_timestamp(probe_at) if probe_at is not None else None,
            last_probe_ok=probe_ok == b"\x01" if probe_ok is not None else None,
            last_probe_category=probe_category.decode(),
        )
        liveness = liveness_shown(endpoint_liveness(beat, now))
        answers.append({"id": str(uuid.UUID(bytes=pk)), "liveness": liveness})
    body = (
        answers[0]
        if endpoint_pk is not None
        else {"agentId": str(agent_pk), "live": True, "endpoints": answers}
    )
    return json.dumps(body, separators=(",", ":")).encode()


def _is_postgresql() -> bool:
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def heartbeat_lean(rest: str, environ) -> LeanAnswer | None:
    """``POST /agents/<rest>`` on the lean lane: a heartbeat or renewal path, from a key
    under its limit, that the statement accepted. Anything else goes on to Django."""
    parts = rest.split("/")
    if len(parts) == 2 and parts[1] == "heartbeat":
        agent_id, endpoint_id = parts[0], None
    elif len(parts) == 4 and parts[1] == "endpoints" and parts[3] in ("heartbeat", "renew"):
        agent_id, endpoint_id = parts[0], parts[2]
    else:
        return None
    if environ.get("CONTENT_LENGTH") not in (None, "", "0") or "HTTP_TRANSFER_ENCODING" in environ:
        return None  # a body, which the heartbeat does not take: the view's to ignore
    if not _is_postgresql() or auth_failure_wait(environ) is not None:
        return None  # a client refused for failed authentications: the view says so
    parsed = _heartbeat_parsed(environ, agent_id, endpoint_id)
    if parsed is None or heartbeat_wait(environ, parsed[0]) is not None:
        return None
    body = _heartbeat_body(*parsed)
    return LeanAnswer(body, _JSON) if body is not None else None


def heartbeat_fast(
    request: HttpRequest, agent_id: str, endpoint_id: str | None
) -> HttpResponse | None:
    """The heartbeat's answer, or None to let the API view answer (see the module)."""
    if not _is_postgresql() or auth_failure_wait(request.META) is not None:
        return None
    parsed = _heartbeat_parsed(request.META, agent_id, endpoint_id)
    if parsed is None:
        return None
    wait = heartbeat_wait(request.META, parsed[0])
    if wait is not None:
        response = problem_response(429, "throttled", "Too many heartbeats for this API key.")
        response["Retry-After"] = str(int(wait + 0.999))
        return response
    body = _heartbeat_body(*parsed)
    if body is None:
        return None
    return HttpResponse(body, content_type="application/json")
