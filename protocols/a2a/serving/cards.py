"""Serving cards: ``GET /a2a/agents/<id>`` on the lean lane (``card_lean``) and as a Django
view (``card_serve``), the latest card or a pinned version (``?version=``)."""

import hashlib
import re
import uuid
from urllib.parse import parse_qs

from django.http import HttpRequest, HttpResponse
from django.utils.http import http_date

from protocols.a2a.cards.selectors import card_cache, card_read_served, card_version_read
from protocols.a2a.models import CardDocument
from protocols.a2a.versions.api import IMMUTABLE, version_serve, withheld_response
from registry.access.throttles import read_limited
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import registry_url
from registry.fastpath.lean import LeanAnswer
from registry.http.problems import problem_response

CARD_CONTENT_TYPE = "application/json"
CARD_CACHE_CONTROL = "public, max-age=60"
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_CARD_HEADERS = (("Content-Type", CARD_CONTENT_TYPE), ("Cache-Control", CARD_CACHE_CONTROL))
_PINNED_HEADERS = (("Content-Type", CARD_CONTENT_TYPE), ("Cache-Control", IMMUTABLE))


def lifecycle_header_list(headers: str) -> list[tuple[str, str]]:
    """The stored ``Name: value`` lines (tab-separated) as header pairs."""
    return [tuple(line.split(": ", 1)) for line in headers.split("\t")] if headers else []


def card_served_etag(sha256: str, headers: str = "") -> str:
    """The quoted ETag of a card as served: its SHA-256, and while the agent is deprecated a
    digest of the lifecycle headers too, so that deprecating or undeprecating it (the same
    bytes, other headers) makes caches fetch it again."""
    if not headers:
        return f'"{sha256}"'
    return f'"{sha256}.{hashlib.sha256(headers.encode()).hexdigest()[:16]}"'


def card_response(body: bytes, sha256: str, updated_at, headers: str = "") -> HttpResponse:
    response = HttpResponse(body, content_type=CARD_CONTENT_TYPE)
    response["ETag"] = card_served_etag(sha256, headers)
    response["Last-Modified"] = http_date(updated_at.timestamp())
    response["Cache-Control"] = CARD_CACHE_CONTROL
    for name, value in lifecycle_header_list(headers):
        response[name] = value
    return response


def version_asked(query: str) -> str | None:
    """The ``version`` parameter of a card URL's query string (None: the latest card)."""
    if query.startswith("version="):
        spec = query[8:]
        if spec.isascii() and spec.isdigit():  # the usual spelling, nothing to decode
            return spec
    values = parse_qs(query).get("version")
    return values[-1] if values else None


def card_lean(agent_id: str, environ) -> LeanAnswer | None:
    """GET /a2a/agents/<id> on the lean lane (registry.fastpath.lean): the stored bytes, with
    their validators, from the process's card cache or one primary-key read (a pinned
    version: its own entry, immutable). Anything else (not a UUID, no card) goes on to
    ``card_serve``, whose problems tell the cases apart."""
    if _CANONICAL_UUID.fullmatch(agent_id):  # the usual spelling: the key as it is
        key = agent_id
    else:
        try:
            key = str(uuid.UUID(agent_id))
        except ValueError:
            return None
    query = environ.get("QUERY_STRING")
    spec = version_asked(query) if query else None
    if spec is not None:
        if not (spec.isascii() and spec.isdigit()):
            return None  # a card version string: the view looks it up
        stored = card_cache.get(
            f"{key}@{int(spec)}", lambda: _version_stored(uuid.UUID(key), int(spec))
        )
        if stored is None:
            return None
        etag, last_modified, body = stored.split(b"\n", 2)
        return LeanAnswer(
            body, list(_PINNED_HEADERS), etag=etag.decode(), last_modified=last_modified.decode()
        )
    stored = card_cache.get(key, lambda: _card_stored(uuid.UUID(key)))
    if stored is None:
        return None
    etag, last_modified, extra, body = stored.split(b"\n", 3)
    headers = list(_CARD_HEADERS)
    if extra:
        headers += lifecycle_header_list(extra.decode())
    return LeanAnswer(body, headers, etag=etag.decode(), last_modified=last_modified.decode())


def _card_stored(pk: uuid.UUID) -> bytes | None:
    """What the card cache keeps of a card: its ETag, its Last-Modified date, its lifecycle
    headers and its bytes, a line each (neither of the first three holds a line break)."""
    entry = card_read_served(pk)
    if entry is None:
        return None
    body, sha256, updated_at, headers = entry
    last_modified = http_date(updated_at.timestamp())
    return b"%s\n%s\n%s\n%s" % (
        card_served_etag(sha256, headers).encode(),
        last_modified.encode(),
        headers.encode(),
        body,
    )


def _version_stored(pk: uuid.UUID, seq: int) -> bytes | None:
    entry = card_version_read(pk, seq)
    if entry is None:
        return None
    body, sha256, created_at = entry
    last_modified = http_date(created_at.timestamp())
    return b'"%s"\n%s\n%s' % (sha256.encode(), last_modified.encode(), bytes(body))


def card_etag(agent: Agent) -> str | None:
    """The ETag of the agent's served card, as it is now; None without one."""
    row = CardDocument.objects.filter(agent=agent).values_list("sha256", "lifecycle_headers")
    found = row.first()
    return card_served_etag(*found) if found is not None else None


def card_serve(request: HttpRequest, agent_id: str) -> HttpResponse:
    """GET /a2a/agents/<id> as a Django view: what the lean lane (``card_lean``) leaves to
    it — the problems (404, a retired agent's 410), refusals (429, redirects,
    preconditions), card version strings — and requests that do not pass through the lane
    (the test client). A plain view: no DRF request wrapping or authentication (card reads
    are public), the same per-IP read limit."""
    limited = read_limited(request)
    if limited is not None:
        return limited
    try:
        pk = uuid.UUID(agent_id)
    except ValueError:
        return problem_response(
            404, "not-found", f"There is no agent '{agent_id}' (ids are UUIDs)."
        )
    spec = version_asked(request.META.get("QUERY_STRING", ""))
    if spec is not None:
        return version_serve(request, pk, spec)
    entry = card_read_served(pk)
    if entry is not None:
        return card_response(*entry)
    agent = Agent.objects.filter(pk=pk).values("status", "status_changed_at", "listed").first()
    if agent is None:
        return problem_response(404, "not-found", f"There is no agent {agent_id}.")
    if not agent["listed"]:
        return withheld_response(
            request,
            pk,
            lambda: _unlisted_card(pk, agent_id),
            lambda: problem_response(404, "not-found", f"There is no agent {agent_id}."),
        )
    if agent["status"] == Agent.Status.RETIRED:
        when = agent["status_changed_at"]
        return problem_response(
            410,
            "retired",
            f"Agent {agent_id} was retired on {when.isoformat().replace('+00:00', 'Z')}; its "
            f"earlier cards stay at /a2a/agents/{agent_id}?version=<n>.",
            retiredAt=when.isoformat().replace("+00:00", "Z"),
        )
    return problem_response(
        404,
        "no-a2a-endpoint",
        f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card.",
    )


def _unlisted_card(pk: uuid.UUID, agent_id: str) -> HttpResponse:
    """The card of an agent that is not publicly listed, for a caller who may read it."""
    row = CardDocument.objects.filter(agent_id=pk).values_list(
        "body", "sha256", "updated_at", "lifecycle_headers"
    )
    found = row.first()
    if found is None:
        detail = f"Agent {agent_id} has no A2A endpoint, so it has no A2A agent card."
        return problem_response(404, "no-a2a-endpoint", detail)
    body, sha256, updated_at, headers = found
    return card_response(bytes(body), sha256, updated_at, headers)


def card_url(agent: Agent) -> str | None:
    """Where the registry serves an agent's A2A card (None: the agent has no A2A endpoint)."""
    if not any(e.protocol == Endpoint.Protocol.A2A for e in agent.endpoints.all()):
        return None
    return registry_url(f"/a2a/agents/{agent.id}")
