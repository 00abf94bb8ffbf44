"""GET /events with a real SSE client (httpx-sse): replay from a cursor, then live; the
discovery filters; a reset when the cursor is older than the outbox keeps. Against the
async stream server (uvicorn, as the Procfile runs it) and the web process's own view."""

import contextlib
import itertools
import queue
import socket
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn
from django.utils import timezone
from httpx_sse import connect_sse

from registry.agents.models import Endpoint
from registry.events import stream
from registry.events.asgi import application
from registry.events.models import Event

PROCFILES = [Path(__file__).resolve().parents[3] / name for name in ("Procfile", "Procfile.serve")]


def procfile_events_flags() -> set[str]:
    """The flags the Procfiles start the stream server with (the same in both)."""
    lines = [
        line
        for path in PROCFILES
        for line in path.read_text().splitlines()
        if line.startswith("events:")
    ]
    flags = [{word for word in line.split() if word.startswith("--")} for line in lines]
    assert len(flags) == 2 and flags[0] == flags[1]
    return flags[0]


@pytest.fixture
def stream_server(transactional_db):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            application,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=1,
            # As the Procfiles run it (uvicorn trusts 127.0.0.1's X-Forwarded-For otherwise).
            proxy_headers="--no-proxy-headers" not in procfile_events_flags(),
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


class Reader:
    """Reads a stream in a thread; ``take(n)`` waits for n more events."""

    def __init__(self, url: str, headers: dict | None = None):
        self.events: queue.Queue = queue.Queue()
        self.status: int | None = None
        self.client = httpx.Client(timeout=httpx.Timeout(30, connect=5))
        self.thread = threading.Thread(target=self._read, args=(url, headers or {}), daemon=True)
        self.thread.start()

    def _read(self, url, headers) -> None:
        try:
            with connect_sse(self.client, "GET", url, headers=headers) as source:
                self.status = source.response.status_code
                for event in source.iter_sse():
                    if event.data:  # (the retry field alone is no event)
                        self.events.put(event)
        except (httpx.HTTPError, RuntimeError):
            pass

    def take(self, count: int, timeout: float = 10) -> list:
        return [self.events.get(timeout=timeout) for _ in range(count)]

    def close(self) -> None:
        self.client.close()


def register(client, payload) -> str:
    answer = client.post("/agents", payload, format="json")
    assert answer.status_code == 201
    return answer.json()["id"]


def test_the_stream_server_replays_from_a_cursor_then_goes_live(
    stream_server, alice, native_payload
):
    first = register(alice, native_payload(name="One"))
    second = register(alice, native_payload(name="Two"))
    start = Event.objects.get(subject=first).id
    reader = Reader(f"{stream_server}/events", {"Last-Event-ID": str(start - 1)})
    try:
        replayed = reader.take(2)
        assert [e.json()["subject"] for e in replayed] == [first, second]
        assert [e.event for e in replayed] == ["agent.created"] * 2
        assert [int(e.id) for e in replayed] == [start, start + 1]
        third = register(alice, native_payload(name="Three"))
        [live] = reader.take(1)
        assert live.json()["subject"] == third
        assert live.json()["data"]["name"] == "Three"
        assert live.id == live.json()["id"]
    finally:
        reader.close()


def test_the_stream_takes_the_discovery_filters(stream_server, alice, native_payload):
    reader = Reader(f"{stream_server}/events?tag=weather")
    try:
        time.sleep(0.5)  # connected: from now on
        register(alice, native_payload(name="Summarizer"))
        weather = [{"name": "forecast", "tags": ["weather"]}]
        wanted = register(alice, native_payload(name="Forecaster", capabilities=weather))
        [event] = reader.take(1)
        assert event.json()["subject"] == wanted
        assert reader.events.empty()
    finally:
        reader.close()


def test_a_cursor_older_than_the_outbox_gets_a_reset(stream_server, alice, native_payload):
    first = register(alice, native_payload(name="One"))
    register(alice, native_payload(name="Two"))
    gone = Event.objects.get(subject=first).id
    Event.objects.filter(id=gone).delete()  # past its retention
    reader = Reader(f"{stream_server}/events?since={gone - 1}")
    try:
        [reset] = reader.take(1)
        assert reset.event == "reset"
        assert "updatedSince" in reset.json()
    finally:
        reader.close()


def test_bad_stream_parameters_are_problems_naming_them(stream_server):
    cases = (("since=abc", "since"), ("colour=red", "colour"), ("protocol=x", "protocol"))
    for query, name in cases:
        answer = httpx.get(f"{stream_server}/events?{query}")
        assert answer.status_code == 400
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["errors"][0]["path"] == name


def test_the_web_process_streams_too(live_server, alice, native_payload, monkeypatch, settings):
    settings.EVENTS_STREAM_URL = ""
    monkeypatch.setattr(stream, "KEEPALIVE_SECONDS", 0.2)
    first = register(alice, native_payload(name="One"))
    cursor = Event.objects.get(subject=first).id - 1
    reader = Reader(f"{live_server.url}/events?since={cursor}")
    try:
        [replayed] = reader.take(1)
        assert replayed.json()["subject"] == first
        second = register(alice, native_payload(name="Two"))
        [live] = reader.take(1)
        assert live.json()["subject"] == second
    finally:
        reader.close()


def test_the_web_process_sends_streams_to_the_stream_server(client, settings):
    settings.EVENTS_STREAM_URL = "http://127.0.0.1:8001/events"
    answer = client.get("/events?tag=nlp")
    assert answer.status_code == 307
    assert answer["Location"] == "http://127.0.0.1:8001/events?tag=nlp"


def test_streams_opened_at_once_each_get_each_event_once(stream_server, alice, native_payload):
    readers = [Reader(f"{stream_server}/events") for _ in range(4)]
    try:
        time.sleep(1)  # all connected: from now on
        agent_id = register(alice, native_payload())
        for reader in readers:
            [event] = reader.take(1)
            assert event.json()["subject"] == agent_id
        time.sleep(1)
        assert all(reader.events.empty() for reader in readers)
    finally:
        for reader in readers:
            reader.close()


def test_an_idle_stream_gets_keep_alive_comments(stream_server, monkeypatch):
    monkeypatch.setattr(stream, "KEEPALIVE_SECONDS", 0.3)
    with (
        httpx.Client(timeout=10) as client,
        client.stream("GET", f"{stream_server}/events") as answer,
    ):
        assert answer.headers["content-type"] == "text/event-stream"
        lines = answer.iter_lines()
        comments = [line for line in itertools.islice(lines, 6) if line.startswith(":")]
    assert comments[:2] == [": keep-alive", ": keep-alive"]


def stream_status(client: httpx.Client, url: str, **headers) -> int:
    """The status a new stream is answered with (the stream is closed again)."""
    with client.stream("GET", url, headers=headers) as answer:
        return answer.status_code


@pytest.fixture
def slots(monkeypatch):
    """Places of their own (streams of earlier tests may not be closed yet)."""
    monkeypatch.setattr(stream, "slots", stream.StreamSlots())


def test_a_client_holds_a_limited_number_of_streams(stream_server, settings, alice, slots):
    settings.EVENTS_STREAMS_PER_CLIENT = 2
    url = f"{stream_server}/events"
    with httpx.Client(timeout=5) as client:
        with contextlib.ExitStack() as held:
            opened = [held.enter_context(client.stream("GET", url)) for _ in range(2)]
            assert [answer.status_code for answer in opened] == [200, 200]
            refused = client.get(url)
            assert refused.status_code == 429
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.headers["retry-after"] == "30"
            assert "EVENTS_STREAMS_PER_CLIENT" in refused.json()["detail"]
            # A valid API key counts apart from its address; an invalid one does not.
            key = alice._credentials["HTTP_AUTHORIZATION"]
            assert stream_status(client, url, Authorization=key) == 200
            assert stream_status(client, url, **{"X-Api-Key": "rk_not-a-key"}) == 429
        # Closed streams give their places back (once the server saw them close).
        deadline = time.monotonic() + 10
        while stream_status(client, url) == 429:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_a_forwarded_for_header_does_not_make_another_client(stream_server, settings, slots):
    # No proxy is trusted: every stream from here is one client, whatever it says it is.
    settings.TRUSTED_PROXY_COUNT = 0
    settings.EVENTS_STREAMS_PER_CLIENT = 2
    url = f"{stream_server}/events"
    with httpx.Client(timeout=5) as client, contextlib.ExitStack() as held:
        opened = [
            held.enter_context(client.stream("GET", url, headers={"X-Forwarded-For": ip}))
            for ip in ("203.0.113.1", "203.0.113.2")
        ]
        assert [answer.status_code for answer in opened] == [200, 200]
        assert stream_status(client, url, **{"X-Forwarded-For": "203.0.113.3"}) == 429
    # One trusted proxy: its X-Forwarded-For names the client, as the web process reads it.
    settings.TRUSTED_PROXY_COUNT = 1
    settings.EVENTS_STREAMS_PER_CLIENT = 1
    stream.slots = stream.StreamSlots()  # (the closed streams' places may not be back yet)
    with httpx.Client(timeout=5) as client, contextlib.ExitStack() as held:
        first = held.enter_context(
            client.stream("GET", url, headers={"X-Forwarded-For": "203.0.113.1"})
        )
        assert first.status_code == 200
        assert stream_status(client, url, **{"X-Forwarded-For": "203.0.113.1"}) == 429
        assert stream_status(client, url, **{"X-Forwarded-For": "203.0.113.2"}) == 200


def test_the_server_holds_a_limited_number_of_streams_in_all(stream_server, settings, slots):
    settings.EVENTS_STREAMS_MAX = 2
    url = f"{stream_server}/events"
    with httpx.Client(timeout=5) as client, contextlib.ExitStack() as held:
        opened = [held.enter_context(client.stream("GET", url)) for _ in range(2)]
        assert [answer.status_code for answer in opened] == [200, 200]
        refused = client.get(url, headers={"X-Api-Key": "rk_not-a-key"})
        assert refused.status_code == 429
        assert "EVENTS_STREAMS_MAX" in refused.json()["detail"]


def test_the_web_process_limits_its_streams_too(live_server, settings, slots, monkeypatch):
    settings.EVENTS_STREAM_URL = ""
    settings.EVENTS_STREAMS_PER_CLIENT = 1
    monkeypatch.setattr(stream, "KEEPALIVE_SECONDS", 0.2)  # a write finds the client gone
    url = f"{live_server.url}/events"
    with httpx.Client(timeout=5) as client:
        with client.stream("GET", url) as held:
            assert held.status_code == 200
            refused = client.get(url)
            assert refused.status_code == 429
            assert refused.headers["content-type"] == "application/problem+json"
        deadline = time.monotonic() + 10
        while stream_status(client, url) == 429:
            assert time.monotonic() < deadline
            time.sleep(0.2)


def test_a_grace_that_runs_out_reaches_the_stream_with_no_write(
    settings, stream_server, alice, native_payload
):
    settings.EVENTS_LIVENESS_WATCH_SECONDS = 0.2
    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint_id = agent["endpoints"][0]["id"]
    assert alice.post(f"/agents/{agent['id']}/heartbeat").status_code == 200
    reader = Reader(f"{stream_server}/events?events=endpoint.liveness_changed")
    try:
        Endpoint.objects.filter(pk=endpoint_id).update(
            alive_until=timezone.now() + timedelta(seconds=1)
        )
        [event] = reader.take(1)
        assert event.json()["liveness"] == "stale"
        assert event.json()["endpointid"] == endpoint_id
        assert event.json()["subject"] == agent["id"]
    finally:
        reader.close()


def test_a_stream_that_falls_too_far_behind_gets_a_reset(stream_server, monkeypatch):
    from registry.events import asgi

    monkeypatch.setattr(asgi, "BACKLOG", 3)
    reader = Reader(f"{stream_server}/events")
    try:
        deadline = time.monotonic() + 10
        while reader.status is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # joined the hub: from now on
        now = timezone.now()
        Event.objects.bulk_create(  # one batch, more than the stream may hold
            [
                Event(type="agent.deleted", subject=uuid.uuid4(), time=now, data=b"{}")
                for _ in "12345"
            ]
        )
        [reset] = reader.take(1)
        assert reset.event == "reset"
        assert reset.json()["reason"] == "The stream fell too far behind."
        assert int(reset.json()["cursor"]) == Event.objects.order_by("-id").first().id
    finally:
        reader.close()
