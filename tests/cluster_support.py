"""The live cluster of tests/test_cluster.py (bench/cluster.py: two registry nodes on a
PostgreSQL primary and its streaming replica, one Redis, the queue relay's consumers on the
local RabbitMQ, a round-robin front) and the helpers its scenarios share. Loaded as a
plugin: ``pytest_plugins = ["tests.https_server", "tests.cluster_support"]``."""

import json
import os
import threading
import time
import urllib.error
import urllib.request
import uuid

import psycopg
import pytest

from bench import pgpair
from bench.cluster import DATABASE, RELAY_BROKER_URL, Cluster
from tests.conftest import NATIVE_PAYLOAD, redis_test_url

MAX_LAG = 6.0


@pytest.fixture(scope="module")
def receiver(tls_server_context):
    """A webhook receiver over HTTPS (the tests' CA), which verifies each signature."""
    from tests.registry.events.receiver import Receiver

    receiver = Receiver(tls_server_context)
    yield receiver
    receiver.stop()


def relay_broker_reachable() -> bool:
    """Whether the local RabbitMQ answers; where the relay's tests are required (CI:
    QUEUE_RELAY_TESTS_REQUIRED=1) it must."""
    import kombu

    try:
        with kombu.Connection(RELAY_BROKER_URL, connect_timeout=2) as conn:
            conn.connect()
    except Exception as exc:
        if os.environ.get("QUEUE_RELAY_TESTS_REQUIRED") == "1":
            pytest.fail(f"the cluster's relay scenarios must run here: {type(exc).__name__}")
        return False
    return True


@pytest.fixture(scope="module")
def cluster(tls_ca, tmp_path_factory):
    if not pgpair.available():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs PostgreSQL 15's programs (initdb, pg_basebackup)")
        pytest.skip(f"no PostgreSQL programs in {pgpair.POSTGRES_BIN}")
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    tls_ca.cert_pem.write_to_path(str(bundle))
    started = Cluster(
        nodes=2,
        redis_url=redis_test_url(),
        beats=True,
        webhooks=True,
        relay=relay_broker_reachable(),
        extra_environment={
            "DATABASE_REPLICA_MAX_LAG_SECONDS": str(MAX_LAG),
            "FETCH_ALLOWED_HOSTS": "localhost",
            "FETCH_CA_BUNDLE": str(bundle),
            "WEBHOOK_RETRY_FIRST_SECONDS": "0",
        },
    )
    started.start(timeout=90)
    started.key = started.admin_key
    try:
        yield started
    finally:
        started.stop()


def call(url: str, *, caller: str, method: str = "GET", body=None, key: str = "", headers=None):
    """(status, JSON body) of a request as the client at address ``caller``."""
    headers = {"X-Forwarded-For": caller, **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def register(
    base: str, key: str, name: str, caller: str = "10.9.0.1", description: str = ""
) -> str:
    description = description or f"{name} files tax returns."
    status, body = call(
        f"{base}/agents",
        caller=caller,
        method="POST",
        body={**NATIVE_PAYLOAD, "name": name, "description": description},
        key=key,
    )
    assert status == 201, body
    return body["id"]


def until(condition, timeout: float, what: str):
    """condition()'s first true value, looked at every 20 ms; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what() if callable(what) else what}")
        time.sleep(0.02)


def replica_sql(cluster, sql: str):
    with psycopg.connect(cluster.pair.url(DATABASE, replica=True), autocommit=True) as replica:
        return replica.execute(sql).fetchone()


def replica_reads(cluster) -> int:
    return replica_sql(
        cluster, f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{DATABASE}'"
    )[0]


def ready(node) -> dict:
    return call(f"{node.url}/readyz", caller="10.9.9.9")[1]


@pytest.fixture(scope="module")
def relay_agent(cluster):
    """A native agent whose A2A endpoint is an AMQP queue of this run, registered through
    node 1, and its queue agent (the demo's executor, recording the tasks it ran) running
    in a thread of the test's process, as an agent behind a firewall runs it."""
    if not cluster.relay:
        pytest.skip("no RabbitMQ on 127.0.0.1:5672: the cluster runs without the relay")
    from protocols.a2a.relay.queue_agent import QueueAgent
    from tests.protocols.a2a.conftest import queue_wait, queues_delete, recording_executor

    queue = f"cluster.{uuid.uuid4().hex[:12]}.agent"
    endpoint = {"name": "jobs", "transport": "Amqp", "protocol": "A2A", "address": queue}
    status, agent = call(
        f"{cluster.nodes[0].url}/agents",
        caller="10.9.6.1",
        method="POST",
        body={**NATIVE_PAYLOAD, "name": "Invoice Lines", "endpoints": [endpoint]},
        key=cluster.key,
    )
    assert status == 201, agent
    executor = recording_executor()
    stop = threading.Event()
    server = QueueAgent(executor, queue, broker_url=RELAY_BROKER_URL)
    thread = threading.Thread(target=server.run, args=(stop,), daemon=True)
    thread.start()
    queue_wait(RELAY_BROKER_URL, queue)
    try:
        yield {"endpoint": agent["endpoints"][0]["id"], "queue": queue, "executor": executor}
    finally:
        stop.set()
        thread.join(timeout=10)
        queues_delete(RELAY_BROKER_URL, [queue])


def relay_call(node, endpoint: str, key: str, method: str, params: dict) -> dict:
    """A JSON-RPC call to the relayed agent through ``node``; its result."""
    status, answer = call(
        f"{node.url}/a2a/queue/{endpoint}",
        caller="10.9.6.2",
        method="POST",
        body={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        key=key,
        headers={"A2A-Version": "1.0"},
    )
    assert status == 200 and "result" in answer, (status, answer)
    return answer["result"]


def relay_send(node, endpoint: str, key: str, text: str, *, at_once: bool = False) -> dict:
    """SendMessage through ``node``: the task it answers (``at_once``: returnImmediately,
    else after the relay waited for the agent's replies)."""
    message = {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": at_once}}
    return relay_call(node, endpoint, key, "SendMessage", params)["task"]


def relay_state(node, endpoint: str, key: str, task_id: str) -> str:
    return relay_call(node, endpoint, key, "GetTask", {"id": task_id})["status"]["state"]


def queue_counts(name: str) -> tuple[int, int]:
    """(messages ready, consumers) of the broker's queue ``name``."""
    import kombu

    with kombu.Connection(RELAY_BROKER_URL, connect_timeout=3) as conn:
        channel = conn.channel()
        try:
            declared = channel.queue_declare(queue=name, passive=True)
        finally:
            channel.close()
    return declared.message_count, declared.consumer_count


def relay_task_states(cluster, ids: list[str]) -> dict[str, str]:
    """Each relayed task's state as the primary holds it."""
    with psycopg.connect(cluster.pair.url(DATABASE), autocommit=True) as primary:
        rows = primary.execute(
            "SELECT id, state FROM a2a_relaytask WHERE id = ANY(%s)", [ids]
        ).fetchall()
    return dict(rows)
