"""The stream server: ``GET /events`` for many clients in one async process (uvicorn
``registry.events.asgi:application``; the Procfile's ``events`` line). No gunicorn worker
is held per stream.

One hub per process follows the outbox: on PostgreSQL it ``LISTEN``s on
``registry_events`` (each committed write's ``NOTIFY``) and reads the new events once for
every client; elsewhere it polls. Clients with the same filters share one filter query per
batch. Each client replays from its cursor first (pages read from the outbox), then takes
the hub's batches; one that falls ``BACKLOG`` frames behind gets a ``reset`` and is closed.
A client (an API key, else an address) holds ``EVENTS_STREAMS_PER_CLIENT`` streams at most,
and the process ``EVENTS_STREAMS_MAX`` in all (then 429). The client's address is the web
process's (``registry.access.counters.client_ip_of``: ``TRUSTED_PROXY_COUNT``), so uvicorn
runs with ``--no-proxy-headers``: its own proxy-header handling would take a client's
``X-Forwarded-For`` as its address.

It also serves the paths the protocol apps registered as ASGI routes
(``registry.extensions.register_asgi_route``): requests that wait, such as a relayed call
waiting for its agent's reply, served here by the app's ASGI application so that no web
worker waits.

The process also watches liveness graces run out (``registry.events.liveness``): every
``EVENTS_LIVENESS_WATCH_SECONDS`` it writes the status changes of the endpoints whose
``alive_until`` passed, in a thread of its own (the streams' queries never wait for it).
"""

import asyncio
import contextlib
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
django.setup()

from asgiref.sync import sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections  # noqa: E402
from django.http import QueryDict  # noqa: E402
from django.utils import timezone  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

from registry import extensions  # noqa: E402
from registry.events import liveness, stream  # noqa: E402
from registry.events.outbox import CHANNEL, latest_cursor  # noqa: E402
from registry.fastpath.notices import own_connection_params  # noqa: E402
from registry.http.metrics import event_streams  # noqa: E402
from registry.http.problems import ProblemError, problem_body  # noqa: E402
from registry.http.request_ids import META_KEY, request_id, request_id_of  # noqa: E402

logger = logging.getLogger(__name__)

BACKLOG = 1000
_db = sync_to_async(lambda f, *a: f(*a))


class Client:
    """One stream: the frames the hub handed it (with the cursor of their batch), written
    out together whenever it wakes."""

    def __init__(self, query: stream.StreamQuery):
        self.query = query
        self.pending: list[tuple[int, bytes]] = []
        self.wake = asyncio.Event()
        self.behind = False

    def hand(self, cursor: int, frames: list[bytes]) -> None:
        if len(self.pending) + len(frames) > BACKLOG:
            self.behind = True
        else:
            self.pending.extend((cursor, frame) for frame in frames)
        self.wake.set()


class Hub:
    """Reads each new batch of events once and hands every client its frames."""

    def __init__(self):
        self.clients: set[Client] = set()
        self.cursor = 0
        self.wake = asyncio.Event()
        self.task: asyncio.Task | None = None
        self.listener: asyncio.Task | None = None
        self.starting = asyncio.Lock()

    async def ensure_started(self) -> None:
        async with self.starting:  # one start, however many streams open at once
            if self.task is None:
                self.cursor = await _db(latest_cursor)
                self.task = asyncio.create_task(self._run())
                self.listener = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        """Wake on each NOTIFY (PostgreSQL); else, and while it cannot listen, poll."""
        while True:
            db = connections[DEFAULT_DB_ALIAS]
            if db.vendor == "postgresql":
                with contextlib.suppress(Exception):
                    import psycopg

                    params = await _db(own_connection_params, db)
                    async with await psycopg.AsyncConnection.connect(
                        autocommit=True, **params
                    ) as conn:
                        await conn.execute(f'LISTEN "{CHANNEL}"')
                        self.wake.set()  # what committed before listening
                        async for _ in conn.notifies():
                            self.wake.set()
            self.wake.set()
            await asyncio.sleep(stream.POLL_SECONDS)

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), stream.POLL_SECONDS * 4)
            self.wake.clear()
            try:
                await self._deliver()
            except Exception:
                logger.exception("The event stream's hub failed to read the outbox")
                await asyncio.sleep(1)

    async def _deliver(self) -> None:
        while True:
            events = await _db(stream.events_after, self.cursor)
            if not events:
                return
            self.cursor = events[-1].id
            groups: dict[tuple, list[Client]] = {}
            for client in self.clients:
                groups.setdefault(client.query.key, []).append(client)
            for clients in groups.values():
                frames = await _db(stream.frames, clients[0].query, events)
                if frames:
                    for client in clients:
                        client.hand(self.cursor, frames)
            if len(events) < stream.PAGE:
                return


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


async def hub_running() -> Hub:
    """This event loop's hub, started at its first stream."""
    hub = _hubs.setdefault(asyncio.get_running_loop(), Hub())
    await hub.ensure_started()
    return hub


class ExpiryWatcher:
    """Writes the liveness changes of graces that ran out, every
    ``EVENTS_LIVENESS_WATCH_SECONDS``: the first look compares every endpoint (what ran out
    while no watcher ran), each later one the graces that ended since the last."""

    def __init__(self):
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="liveness-watch")
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        if self.task is None and settings.EVENTS_LIVENESS_WATCH_SECONDS > 0:
            self.task = asyncio.create_task(self._run())

    def _look(self, since):
        close_old_connections()  # a connection the database dropped is opened again
        now = timezone.now()
        liveness.expiries_write(since, now)
        return now

    async def _run(self) -> None:
        loop, since = asyncio.get_running_loop(), None
        while True:
            try:
                since = await loop.run_in_executor(self.thread, self._look, since)
            except Exception:
                logger.exception("The liveness watcher failed to write the status changes")
            await asyncio.sleep(settings.EVENTS_LIVENESS_WATCH_SECONDS)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        await asyncio.get_running_loop().run_in_executor(self.thread, connections.close_all)
        self.thread.shutdown(wait=False)


async def _send_problem(send, status: int, body: dict, headers: dict | None = None) -> None:
    import json

    extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/problem+json"), *extra],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


async def _lifespan(receive, send) -> None:
    watcher = ExpiryWatcher()
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            watcher.start()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await watcher.stop()
            _hubs.pop(asyncio.get_running_loop(), None)
            await _db(connections.close_all)  # the database thread's connections
            await send({"type": "lifespan.shutdown.complete"})
            return


_routes: list[tuple[str, object]] | None = None


def asgi_route(path: str):
    """The ASGI application registered for ``path`` (the longest prefix), or None."""
    global _routes
    if _routes is None:
        _routes = sorted(
            (
                (
                    route.prefix,
                    import_string(route.app) if isinstance(route.app, str) else route.app,
                )
                for route in extensions.asgi_routes.read()
            ),
            key=lambda item: -len(item[0]),
        )
    return next((app for prefix, app in _routes if path.startswith(prefix)), None)


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["type"] == "http":
        # The request's id, as in the web process: the client's when well-formed, else a
        # new one, in the context (this request's task) and in the answer.
        rid = request_id_of(_request_id_meta(scope))
        request_id.set(rid)
        send = _with_request_id(send, rid)
    routed = asgi_route(scope["path"]) if scope["type"] == "http" else None
    if routed is not None:
        await routed(scope, receive, send)
        return
    if scope["type"] != "http" or scope["path"] != "/events" or scope["method"] != "GET":
        await _send_problem(send, 404, problem_body(404, "not-found", "Only GET /events here."))
        return
    query_string = scope.get("query_string", b"").decode("latin-1")
    params = QueryDict(mutable=True)
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        params.appendlist(name, value)
    headers = dict(scope.get("headers") or [])
    last_id = headers.get(b"last-event-id", b"").decode("latin-1") or None
    try:
        query = await _db(stream.stream_query, params, last_id)
    except ProblemError as exc:
        body = problem_body(400, exc.slug, exc.problem_detail, errors=exc.errors)
        await _send_problem(send, 400, body)
        return
    meta = _meta(scope, headers)
    who = await _db(stream.stream_client, meta)
    query.reader = await _db(stream.stream_reader, meta)
    if not stream.slots.take(who):
        body = problem_body(429, "throttled", stream.too_many_streams(stream.slots.refused))
        await _send_problem(send, 429, body, {"Retry-After": "30"})
        return
    try:
        await _stream(scope, receive, send, query)
    finally:
        stream.slots.give_back(who)


def _request_id_meta(scope) -> dict:
    for name, value in scope.get("headers") or ():
        if name == b"x-request-id":
            return {META_KEY: value.decode("latin-1")}
    return {}


def _with_request_id(send, rid: str):
    async def sent(message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), (b"x-request-id", rid.encode())]
            message = {**message, "headers": headers}
        await send(message)

    return sent


def _meta(scope, headers: dict) -> dict:
    """What ``stream.stream_client`` reads of a request, as a WSGI environ says it."""
    meta = {"REMOTE_ADDR": (scope.get("client") or ("", 0))[0]}
    for name in (b"x-api-key", b"authorization", b"x-forwarded-for"):
        if name in headers:
            meta["HTTP_" + name.decode().upper().replace("-", "_")] = headers[name].decode(
                "latin-1"
            )
    return meta


async def _stream(scope, receive, send, query: stream.StreamQuery) -> None:
    hub = await hub_running()
    client = Client(query)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
            ],
        }
    )
    disconnected = asyncio.create_task(_disconnect(receive))
    event_streams.inc()
    try:
        await _serve(hub, client, send, disconnected)
    finally:
        event_streams.dec()
        hub.clients.discard(client)
        disconnected.cancel()


async def _disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _write(send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _serve(hub: Hub, client: Client, send, disconnected: asyncio.Task) -> None:
    cursor, first = await _db(stream.start, client.query)
    await _write(send, b"retry: 3000\n\n" + b"".join(first))
    # Replay up to the hub's position, joined before it so nothing falls in between.
    hub.clients.add(client)
    target = hub.cursor
    while cursor < target:
        events = await _db(stream.events_after, cursor)
        events = [e for e in events if e.id <= target]
        if not events:
            break
        cursor = events[-1].id
        frames = await _db(stream.frames, client.query, events)
        if frames:
            await _write(send, b"".join(frames))
    cursor = max(cursor, target)
    disconnected.add_done_callback(lambda _: client.wake.set())
    while not disconnected.done():
        try:
            async with asyncio.timeout(stream.KEEPALIVE_SECONDS):
                await client.wake.wait()
        except TimeoutError:
            await _write(send, stream.KEEPALIVE)
            continue
        client.wake.clear()
        taken, client.pending = client.pending, []
        frames = [frame for batch, frame in taken if batch > cursor]  # (not replayed)
        if frames and not disconnected.done():
            await _write(send, b"".join(frames))
        if client.behind:
            reset = await _db(stream.reset_frame, hub.cursor, "The stream fell too far behind.")
            await send({"type": "http.response.body", "body": reset, "more_body": False})
            return
