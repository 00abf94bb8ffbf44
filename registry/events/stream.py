"""``GET /events``: every event as a server-sent event (``id:`` the cursor, ``event:`` the
short type, ``data:`` the CloudEvents JSON), replayed from ``Last-Event-ID`` or ``?since=``
first, then live, for the agents matching the same filters as discovery (and ``events``,
a comma-separated list of event types). A comment line every ``KEEPALIVE_SECONDS`` keeps
proxies from closing an idle stream. A client asking for events older than the outbox
keeps (``EVENTS_RETENTION_DAYS``), or too slow to keep up, gets a ``reset`` event: resync
from the listing's change feed (``GET /agents?updated_since=<updatedSince>``).

The async server (``registry.events.asgi``) serves it at scale; this module's Django view
answers it too (``manage.py runserver``), polling the outbox, or redirects to the async
server when ``EVENTS_STREAM_URL`` is set (``make run``, ``make serve``).
"""

import contextlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Q
from django.http import HttpResponse, QueryDict, StreamingHttpResponse
from django.utils import timezone
from rest_framework.exceptions import APIException

from registry.access.auth import api_key_hash, raw_api_key_of
from registry.access.counters import client_ip_of
from registry.access.models import ApiKey
from registry.access.tokens import looks_like_token, token_verify
from registry.agents.visibility import Reader
from registry.discovery.filters import agent_filterset
from registry.events import envelope, outbox
from registry.events.audience import audience_kept
from registry.events.models import Event
from registry.events.outbox import latest_cursor, oldest_cursor
from registry.events.subscriptions import events_validate, filter_validate, matching_subjects
from registry.http.metrics import event_streams
from registry.http.params import bad_parameter, params_check
from registry.http.problems import ProblemError, problem_response

KEEPALIVE_SECONDS = 15
POLL_SECONDS = 0.5
PAGE = 500
KEEPALIVE = b": keep-alive\n\n"


@dataclass
class StreamQuery:
    since: int | None
    filter: dict = field(default_factory=dict)
    types: frozenset = frozenset()
    # Who reads it (its key's or token's owner, role and groups; None: anonymous): an
    # admin's takes the events for admins too (the moderators' decisions), and a reader
    # of restricted agents their events (registry.agents.visibility).
    reader: Reader | None = None

    @property
    def admin(self) -> bool:
        return self.reader is not None and self.reader.is_admin

    @property
    def key(self) -> tuple:
        return (tuple(sorted(self.filter.items())), tuple(sorted(self.types)), self.reader)


def stream_query(params: QueryDict, last_event_id: str | None) -> StreamQuery:
    """The stream's parameters, checked as discovery checks them (400 problems naming each)."""
    filters = set(agent_filterset().base_filters)
    params_check(params, filters | {"since", "events"})
    raw = last_event_id or params.get("since")
    since = None
    if raw not in (None, ""):
        if not (raw.isascii() and raw.isdigit()):
            raise bad_parameter("since", "must be an event id (a whole number)")
        since = int(raw)
    types = [t for t in (params.get("events") or "").split(",") if t]
    try:
        types = events_validate(types)
    except ProblemError:
        raise bad_parameter(
            "events", f"must list some of {', '.join(envelope.EVENT_TYPES)}"
        ) from None
    chosen = {name: params[name] for name in filters if params.get(name)}
    try:
        filter_validate(chosen)
    except ProblemError as exc:
        errors = [type(e)(e.path.removeprefix("filter."), e.message) for e in exc.errors]
        raise ProblemError(400, "validation-error", exc.problem_detail, errors) from None
    return StreamQuery(since, chosen, frozenset(types))


def _stream_credential(meta) -> tuple[str, Reader] | None:
    """("key:<id>" or "token:<identity>", who it reads as) of the valid API key or token a
    stream carries, or None."""
    try:
        raw = raw_api_key_of(meta)
    except ValueError:
        raw = ""
    if raw and settings.OIDC_ISSUERS and looks_like_token(raw):
        with contextlib.suppress(APIException):
            identity = token_verify(raw)
            reader = Reader(identity.owner, identity.admin, tuple(sorted(identity.groups)))
            return f"token:{identity.scope_hash}", reader
        return None
    if not raw:
        return None
    key = (
        ApiKey.objects.filter(key_hash=api_key_hash(raw), revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .values_list("pk", "owner", "scope", "groups")
        .first()
    )
    if key is None:
        return None
    pk, owner, scope, groups = key
    return f"key:{pk}", Reader(owner, scope == ApiKey.Scope.ADMIN, tuple(sorted(groups or ())))


def stream_client(meta) -> str:
    """Whom a stream counts against: the API key it carries when the key is valid (so
    clients behind one address, each with its key, count apart), or the identity of its
    valid token (every token of it together), else its address."""
    credential = _stream_credential(meta)
    return credential[0] if credential is not None else f"address:{client_ip_of(meta)}"


def stream_reader(meta) -> Reader | None:
    """Who the stream reads as: its valid key's or token's owner, role and groups (the
    events for admins, and those of the restricted agents it may read), or None."""
    credential = _stream_credential(meta)
    return credential[1] if credential is not None else None


class StreamSlots:
    """The streams this process holds open: ``EVENTS_STREAMS_PER_CLIENT`` per client and
    ``EVENTS_STREAMS_MAX`` in all (0: no limit), so neither one client nor many addresses
    can take every connection the server has."""

    def __init__(self):
        self.held: Counter = Counter()
        self.total = 0
        self.lock = threading.Lock()
        self.refused = ""

    def take(self, client: str) -> bool:
        """Whether ``client`` may open one more stream (then it holds it); when not,
        ``refused`` names the limit (``too_many_streams`` says it)."""
        per_client, in_all = settings.EVENTS_STREAMS_PER_CLIENT, settings.EVENTS_STREAMS_MAX
        with self.lock:
            if in_all and self.total >= in_all:
                self.refused = "EVENTS_STREAMS_MAX"
                return False
            if per_client and self.held[client] >= per_client:
                self.refused = "EVENTS_STREAMS_PER_CLIENT"
                return False
            self.held[client] += 1
            self.total += 1
            return True

    def give_back(self, client: str) -> None:
        with self.lock:
            self.held[client] -= 1
            self.total -= 1
            if self.held[client] <= 0:
                del self.held[client]


slots = StreamSlots()


def too_many_streams(limit: str = "EVENTS_STREAMS_PER_CLIENT") -> str:
    """The detail of the 429 problem for a stream past a limit (Retry-After: 30)."""
    if limit == "EVENTS_STREAMS_MAX":
        return (
            f"This server already holds {settings.EVENTS_STREAMS_MAX} event streams open "
            "(EVENTS_STREAMS_MAX): retry later, or use webhooks."
        )
    return (
        f"This client already holds {settings.EVENTS_STREAMS_PER_CLIENT} event streams open "
        "(EVENTS_STREAMS_PER_CLIENT): close one, or share one stream between readers."
    )


def events_after(after: int, limit: int = PAGE) -> list[Event]:
    return outbox.events_after(after, limit)


def frames(query: StreamQuery, events: list[Event]) -> list[bytes]:
    """The SSE frames of the events this stream takes."""
    kept = [e for e in events if not query.types or e.type in query.types]
    kept = audience_kept(kept, lambda: query.reader)
    subjects = {e.subject for e in kept if e.subject and e.type != envelope.AGENT_DELETED}
    matching = matching_subjects(query.filter, subjects) if query.filter else subjects
    return [
        envelope.sse_frame(e.id, e.type, envelope.event_bytes(e))
        for e in kept
        if e.type == envelope.AGENT_DELETED or e.subject is None or e.subject in matching
    ]


def reset_frame(cursor: int, reason: str) -> bytes:
    """Resync from the change feed since the oldest event kept, then follow from ``cursor``."""
    first = Event.objects.order_by("id").values_list("time", flat=True).first()
    body = {"reason": reason, "cursor": cursor}
    if first is not None:
        body["updatedSince"] = first.isoformat().replace("+00:00", "Z")
    return envelope.sse_frame(cursor, "reset", json.dumps(body).encode())


def start(query: StreamQuery) -> tuple[int, list[bytes]]:
    """Where the stream starts and what it says first: from ``since``, or a reset when the
    outbox no longer holds what follows it, or from now."""
    if query.since is None:
        return latest_cursor(), []
    if query.since < oldest_cursor():
        latest = latest_cursor()
        return latest, [reset_frame(latest, "The events after the cursor are no longer kept.")]
    return query.since, []


def _polled(query: StreamQuery):
    cursor, first = start(query)
    yield b"retry: 3000\n\n"
    yield from first
    idle_since = time.monotonic()
    while True:
        events = events_after(cursor)
        if events:
            cursor = events[-1].id
            yield from frames(query, events)
            idle_since = time.monotonic()
            if len(events) == PAGE:
                continue
        elif time.monotonic() - idle_since >= KEEPALIVE_SECONDS:
            yield KEEPALIVE
            idle_since = time.monotonic()
        time.sleep(POLL_SECONDS)


class _HeldStream:
    """The stream's frames, holding the client's place until the server closes the response
    (the client went away), whether or not a frame was ever sent."""

    def __init__(self, query: StreamQuery, client: str):
        self.frames, self.client, self.held = _polled(query), client, True
        event_streams.inc()

    def __iter__(self):
        return self.frames

    def close(self) -> None:
        self.frames.close()
        if self.held:
            self.held = False
            event_streams.dec()
            slots.give_back(self.client)


def events_view(request):
    """``GET /events`` in the web process: the async server's address when there is one,
    else the stream itself (one thread per stream: the development server)."""
    if request.method != "GET":
        return problem_response(405, "method-not-allowed", "GET /events only.")
    try:
        query = stream_query(request.GET, request.headers.get("Last-Event-ID"))
    except ProblemError as exc:
        return problem_response(400, exc.slug, exc.problem_detail, errors=exc.errors)
    if settings.EVENTS_STREAM_URL:
        raw = request.META.get("QUERY_STRING", "")
        redirect = HttpResponse(status=307)  # 307: the client asks there the same way
        redirect["Location"] = settings.EVENTS_STREAM_URL + (f"?{raw}" if raw else "")
        return redirect
    client = stream_client(request.META)
    query.reader = stream_reader(request.META)
    if not slots.take(client):
        response = problem_response(429, "throttled", too_many_streams(slots.refused))
        response["Retry-After"] = "30"
        return response
    response = StreamingHttpResponse(_HeldStream(query, client), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
