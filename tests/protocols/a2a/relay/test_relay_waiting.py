"""Relayed calls that wait for their agents' replies never take the web workers: gunicorn
with two sync workers, as ``make serve`` runs it, keeps answering while a hundred calls
wait on a queue nobody consumes (protocols.a2a.relay.waits). No timing is asserted: the
outcomes are counted, and ordered against the health check's answer."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from django.db import connection

from bench.server import port_free

ROOT = Path(__file__).resolve().parents[4]
CALLS = 100


def queue_depth(url: str, name: str) -> int:
    import kombu

    with kombu.Connection(url) as conn:
        return conn.default_channel.queue_declare(queue=name, passive=True).message_count


def send_body(text: str = "hello") -> dict:
    message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def refused_by_a_limit(response: httpx.Response) -> str | None:
    """The limit a relayed call was refused by (named in its JSON-RPC error), or None."""
    if response.status_code != 200:
        return None
    error = response.json().get("error") or {}
    data = error.get("data") or {}
    return data.get("limit") if "retryAfter" in data else None


@pytest.fixture
def gunicorn(relay, settings, tmp_path):
    """gunicorn with two sync workers (make serve's default) over the test database, each
    wait as long as 60 s (longer than this test runs)."""
    port = port_free()
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "QUEUE_RELAY_BROKER_URL": settings.QUEUE_RELAY_BROKER_URL,
        "QUEUE_RELAY_REPLY_QUEUE": settings.QUEUE_RELAY_REPLY_QUEUE,
        "QUEUE_RELAY_DEAD_LETTER_QUEUE": settings.QUEUE_RELAY_DEAD_LETTER_QUEUE,
        "QUEUE_RELAY_WAIT_SECONDS": "60",
        "RATE_LIMIT_READ": "100000/min",
        "REGISTRY_VAR_DIR": str(tmp_path),
        "REGISTRY_BASE_URL": f"http://127.0.0.1:{port}",
    }
    env.pop("REDIS_URL", None)
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "gunicorn", "registry.wsgi", "--workers", "2"),
            *("--worker-class", "sync", "--timeout", "120", "--bind", f"127.0.0.1:{port}"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        process.kill()
        pytest.fail(f"gunicorn did not start: {(tmp_path / 'gunicorn.log').read_text()}")
    yield url
    os.killpg(process.pid, signal.SIGKILL)  # its workers too, waits and all
    process.wait(20)
    log.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_health_check_answers_while_a_hundred_relayed_calls_wait(gunicorn, idle_queue, relay):
    url = f"{gunicorn}/a2a/queue/{idle_queue['endpoint']}"
    finished: list[tuple[int, httpx.Response | Exception]] = []
    lock = threading.Lock()

    def call(n: int) -> None:
        try:
            outcome = httpx.post(url, json=send_body(), headers={"A2A-Version": "1.0"}, timeout=90)
        except Exception as exc:  # the server stopped at the end of the test
            outcome = exc
        with lock:
            finished.append((n, outcome))

    threads = [threading.Thread(target=call, args=(n,), daemon=True) for n in range(CALLS)]
    for thread in threads:
        thread.start()
    # Until each call either came back or had its request published (it waits), for 20 s at
    # most: the web process is then as busy as these calls make it.
    for _ in range(200):
        with lock:
            done = len(finished)
        if done + queue_depth(relay["broker"], idle_queue["queue"]) >= CALLS:
            break
        time.sleep(0.1)
    health = httpx.get(f"{gunicorn}/healthz", timeout=2)
    with lock:
        before_health = list(finished)
    published = queue_depth(relay["broker"], idle_queue["queue"])

    assert health.status_code == 200
    # Every call that came back before the health check's answer was refused by a limit
    # (nothing published for it); the others were still waiting for their replies.
    limits = {refused_by_a_limit(outcome) for _, outcome in before_health}
    assert limits <= {"QUEUE_RELAY_WEB_WAITS", "QUEUE_RELAY_WEB_WAITS_PER_CLIENT"}
    outstanding = CALLS - len(before_health)
    assert outstanding >= 1
    assert published == outstanding == 1  # QUEUE_RELAY_WEB_WAITS: one wait in all
    refused = next(o for _, o in before_health)
    assert refused.headers["Retry-After"] == "60"
    assert "returnImmediately" in json.loads(refused.content)["error"]["message"]
