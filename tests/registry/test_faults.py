"""What clients see when things break: a Redis server of the test's own stopped and paused,
the database unreachable, and a connection broken under a running request. Every face
keeps answering JSON (never a server's HTML page); a database outage is a 503 problem with
Retry-After on the HTTP API (the lean lane too), a JSON-RPC error on the A2A face and a
tool error carrying the problem on the MCP face."""

import asyncio
import logging
import os
import signal
import socketserver
import subprocess
import threading
import time
import uuid
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
import httpx2
import pytest
import redis
from django.core.cache import caches
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection, connections
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from registry.access.keys import api_key_create
from registry.fastpath.lean import LeanApplication
from tests.conftest import free_port
from tests.registry.fastpath.test_lean import Recorder, call

# Every face under a fault, the A2A and MCP ones too: with those apps installed.
pytestmark = pytest.mark.apps("a2a", "mcp_face")


@pytest.fixture
def redis_server():
    """A Redis server of this test's own, nothing saved; stopped at the end whatever the
    test did to it."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_timeout=1)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    else:
        process.kill()
        pytest.skip("redis-server did not start")
    yield process, url
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        process.terminate()
        process.wait(10)


@pytest.fixture
def shared_redis(redis_server, settings):
    process, url = redis_server
    settings.CACHES = {
        "default": {
            "BACKEND": "registry.access.shared_cache.SharedRedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "faults",
        }
    }
    return process, redis.Redis.from_url(url, socket_timeout=1)


@pytest.fixture
def card_agent(alice, make_card) -> str:
    return alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]


def test_with_redis_up_the_rate_limits_count_in_redis(shared_redis, card_agent):
    _, client = shared_redis
    app = LeanApplication(Recorder())
    status, _, _ = call(app, "GET", f"/a2a/agents/{card_agent}")
    assert status == 200
    assert any(b"throttle:read:" in key for key in client.keys("*"))


@pytest.mark.parametrize("fault", ["stopped", "paused"])
def test_without_redis_every_face_answers_and_limits_count_per_process(
    shared_redis, card_agent, alice, native_payload, fault, settings, caplog
):
    process, _ = shared_redis
    settings.RATE_LIMIT_READ = "6/day"
    if fault == "stopped":
        process.terminate()
        process.wait(10)
    else:
        os.kill(process.pid, signal.SIGSTOP)
    app = LeanApplication(Recorder())
    caplog.set_level(logging.WARNING, "registry.access.shared_cache")

    status, headers, body = call(app, "GET", f"/a2a/agents/{card_agent}")
    assert status == 200 and b"Weather Agent" in body
    assert call(app, "GET", "/healthz")[0] == 200
    status, headers, body = call(app, "GET", "/discover/agents")
    assert status == 200 and headers["Content-Type"] == "application/json"
    registered = alice.post("/agents", native_payload(), format="json")
    assert registered.status_code == 201
    beat = alice.post(f"/agents/{registered.json()['id']}/heartbeat")
    assert beat.status_code == 200
    # The breaker is open: Redis is not asked again, and the outage is logged once.
    assert caches["default"].available() is False
    for _ in range(3):
        call(app, "GET", "/healthz")
    assert len([r for r in caplog.records if "does not answer" in r.getMessage()]) == 1
    # The read limit (6 a minute) still holds, counted in this process.
    answers = [call(app, "GET", f"/a2a/agents/{card_agent}") for _ in range(6)]
    status, headers, body = answers[-1]
    assert status == 429 and headers["Content-Type"] == "application/problem+json"
    assert headers["Retry-After"]


def test_readyz_says_the_cache_is_degraded_while_redis_is_down(shared_redis, anon, monkeypatch, db):
    from registry import health

    monkeypatch.setitem(health._last, "at", None)
    process, _ = shared_redis
    process.terminate()
    process.wait(10)
    response = anon.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "cache": "degraded", "broker": "ok"},
    }


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def lean_server(settings):
    """registry.wsgi's stack (the lean lane before Django) on a live server of its own."""
    server = make_server(
        "127.0.0.1",
        0,
        LeanApplication(WSGIHandler()),
        server_class=_ThreadingWSGIServer,
        handler_class=_QuietHandler,
    )
    # Each request's connection closes with it: none is left open in a finished thread.
    config = connections.settings["default"]
    kept, config["CONN_MAX_AGE"] = config.get("CONN_MAX_AGE", 0), 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    settings.ALLOWED_HOSTS = ["127.0.0.1", "testserver", "localhost"]
    settings.REGISTRY_BASE_URL = url
    yield url
    server.shutdown()
    server.server_close()
    config["CONN_MAX_AGE"] = kept


@pytest.fixture
def database_down():
    """New connections (every request's, in the servers' threads) cannot reach the
    database: PostgreSQL on a port where nothing listens, SQLite in a folder that does not
    exist. The test's own open connection is unchanged."""
    config = connections.settings["default"]
    saved = {name: config.get(name) for name in ("NAME", "PORT")}

    def down():
        if connection.vendor == "postgresql":
            config["PORT"] = str(free_port())
        else:
            config["NAME"] = f"/nonexistent-{uuid.uuid4().hex}/registry.sqlite3"

    yield down
    config.update(saved)


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.headers["Retry-After"] == "5"
    assert response.json()["type"] == "/problems/service-unavailable"


@pytest.mark.django_db(transaction=True)
def test_a_database_outage_is_a_503_on_every_http_path(
    lean_server, database_down, make_card, native_payload, caplog
):
    _, key = api_key_create(owner="alice")
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=lean_server, timeout=30) as http:
        agent = http.post("/agents", json=native_payload(), headers=auth).json()
        card = http.post("/a2a/agents", json={"card": make_card()}, headers=auth).json()
        assert http.get(f"/a2a/agents/{card['id']}").status_code == 200
        database_down()
        assert http.get("/healthz").status_code == 200  # the process answers
        assert_unavailable(http.get(f"/a2a/agents/{card['id']}"))  # the lean lane's path
        assert_unavailable(http.get("/discover/agents"))
        assert_unavailable(http.get(f"/agents/{agent['id']}"))
        assert_unavailable(http.post("/agents", json=native_payload(), headers=auth))
        assert_unavailable(http.post(f"/agents/{agent['id']}/heartbeat", headers=auth))
        ready = http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["database"] == "unavailable"
    assert "does not answer" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_database_outage_is_a_json_rpc_error_on_the_a2a_face(lean_server, database_down):
    database_down()
    message = {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "find weather"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answered = httpx.post(
        f"{lean_server}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}, timeout=30
    )
    error = answered.json()["error"]
    assert error["code"] == -32603
    # a2a-sdk carries the data as a google.rpc.ErrorInfo's metadata
    (info,) = error["data"]
    assert info["metadata"]["problem"]["type"] == "/problems/service-unavailable"
    assert "database does not answer" in error["message"]


@pytest.mark.django_db(transaction=True)
def test_a_database_outage_is_a_tool_error_with_the_problem_on_the_mcp_face(
    lean_server, database_down
):
    async def discover():
        async with httpx2.AsyncClient(timeout=30) as http:
            transport = streamable_http_client(f"{lean_server}/mcp", http_client=http)
            async with Client(transport) as client:
                database_down()
                return await client.call_tool("discover_agents", {"q": "weather"})

    result = asyncio.run(discover())
    assert result.is_error is True
    assert result.structured_content["problem"]["type"] == "/problems/service-unavailable"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_connection_broken_under_a_running_request_is_a_503_and_the_next_one_works(
    lean_server, native_payload
):
    _, key = api_key_create(owner="alice")
    auth = {"Authorization": f"Bearer {key}"}
    agent = httpx.post(f"{lean_server}/agents", json=native_payload(), headers=auth).json()
    answers = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (own_pid,) = cursor.fetchone()
    locker = connections.create_connection("default")
    try:
        with locker.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute("LOCK TABLE registry_agent IN ACCESS EXCLUSIVE MODE")

            def patch():
                answers["patch"] = httpx.patch(
                    f"{lean_server}/agents/{agent['id']}",
                    json={"description": "changed"},
                    headers=auth,
                    timeout=30,
                )

            request = threading.Thread(target=patch)
            request.start()
            # The request waits for the lock: break its connection under it.
            killed = []
            for _ in range(200):
                with connection.cursor() as look:
                    look.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE wait_event_type = 'Lock' AND datname = current_database()"
                        " AND pid <> %s",
                        [own_pid],
                    )
                    killed = look.fetchall()
                if killed:
                    break
                time.sleep(0.05)
            cursor.execute("ROLLBACK")
            request.join(30)
    finally:
        locker.close()
    assert killed
    assert_unavailable(answers["patch"])
    retried = httpx.patch(
        f"{lean_server}/agents/{agent['id']}", json={"description": "changed"}, headers=auth
    )
    assert retried.status_code == 200
    assert retried.json()["description"] == "changed"
