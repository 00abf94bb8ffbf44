"""Fixtures of the A2A tests that reach the local HTTPS and DNS test servers (their modules
load ``tests.https_server`` and ``tests.dns_server`` as plugins)."""

import contextlib
import os
import threading
import time
import uuid

import pytest


@pytest.fixture
def network(settings, ca_bundle, dns_server):
    """Fetches may reach the local servers: the test CA, localhost allowed, the test DNS."""
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = dns_server.port
    settings.PROBE_CONCURRENCY = 1
    return settings


RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672//"


@pytest.fixture(scope="session")
def rabbitmq() -> str:
    """The local RabbitMQ's URL; without one the relay's tests are skipped with a note,
    except where ``QUEUE_RELAY_TESTS_REQUIRED=1`` (CI, .ci/run): there it is a failure."""
    import kombu

    try:
        with kombu.Connection(RABBITMQ_URL, connect_timeout=2) as conn:
            conn.connect()
    except Exception as exc:
        reason = f"no RabbitMQ on 127.0.0.1:5672 ({type(exc).__name__})"
        if os.environ.get("QUEUE_RELAY_TESTS_REQUIRED") == "1":
            pytest.fail(f"the queue relay's tests must run here: {reason}")
        pytest.skip(reason)
    return RABBITMQ_URL


def queues_delete(url: str, names: list[str]) -> None:
    import kombu

    with kombu.Connection(url) as conn:
        for name in names:
            with contextlib.suppress(Exception):  # already gone
                channel = conn.channel()
                channel.queue_delete(queue=name)
                channel.close()


@pytest.fixture
def relay(rabbitmq, settings, live_server):
    """The relay set up for one test: its own reply and dead-letter queues on the local
    RabbitMQ (parallel runs do not share them), the registry at the live server, and the
    relay consumer running in a thread; the queues are deleted afterwards."""
    from protocols.a2a.relay.consumer import relay_consume

    run = uuid.uuid4().hex[:12]
    settings.REGISTRY_BASE_URL = live_server.url
    settings.QUEUE_RELAY_BROKER_URL = rabbitmq
    settings.QUEUE_RELAY_REPLY_QUEUE = f"test.{run}.replies"
    settings.QUEUE_RELAY_DEAD_LETTER_QUEUE = f"test.{run}.dead"
    settings.QUEUE_RELAY_WAIT_SECONDS = 10
    stop = threading.Event()
    consumer = threading.Thread(target=relay_consume, args=(stop,), daemon=True)
    consumer.start()
    state = {"run": run, "url": live_server.url, "queues": [], "stop": stop, "broker": rabbitmq}
    yield state
    stop.set()
    consumer.join(timeout=10)
    queues_delete(
        rabbitmq,
        [
            settings.QUEUE_RELAY_REPLY_QUEUE,
            settings.QUEUE_RELAY_DEAD_LETTER_QUEUE,
            *state["queues"],
        ],
    )


def recording_executor():
    """The demo's executor, recording what it ran and the headers it got; a message
    saying "hold" leaves its task working (until canceled)."""
    from a2a.server.tasks import TaskUpdater

    from protocols.a2a.demo import InvoiceLinesExecutor

    class RecordingExecutor(InvoiceLinesExecutor):
        def __init__(self) -> None:
            self.ran: list[str] = []
            self.headers: list[dict] = []

        async def execute(self, context, event_queue) -> None:
            self.ran.append(context.task_id)
            self.headers.append(dict(context.call_context.state["headers"]))
            if context.get_user_input() == "hold":
                updater = TaskUpdater(event_queue, context.task_id, context.context_id)
                await updater.start_work()
                return
            await super().execute(context, event_queue)

    return RecordingExecutor()


@pytest.fixture
def queue_agent(relay, alice, native_payload):
    """A native agent whose A2A endpoint is an AMQP queue; ``start()`` runs its queue agent
    in a thread (its queue is declared by then)."""
    queue = f"test.{relay['run']}.agent"
    relay["queues"].append(queue)
    payload = native_payload(
        name="Invoices",
        endpoints=[{"name": "jobs", "transport": "Amqp", "protocol": "A2A", "address": queue}],
    )
    agent = alice.post("/agents", payload, format="json").json()
    executor = recording_executor()
    stop = threading.Event()
    threads = []

    def start(wait_declared: bool = True) -> None:
        from django.conf import settings

        from protocols.a2a.relay.queue_agent import QueueAgent

        server = QueueAgent(executor, queue, broker_url=settings.QUEUE_RELAY_BROKER_URL)
        thread = threading.Thread(target=server.run, args=(stop,), daemon=True)
        thread.start()
        threads.append(thread)
        if wait_declared:
            queue_wait(settings.QUEUE_RELAY_BROKER_URL, queue)

    def pause() -> None:
        """Stops the queue agent and waits until it stopped (its consumer is gone)."""
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
            assert not thread.is_alive(), "the queue agent did not stop"

    yield {
        "agent": agent,
        "queue": queue,
        "executor": executor,
        "start": start,
        "stop": stop,
        "pause": pause,
        "endpoint": agent["endpoints"][0]["id"],
    }
    stop.set()
    for thread in threads:
        thread.join(timeout=10)


def queue_wait(url: str, queue: str) -> None:
    """Until ``queue`` exists on the broker."""
    import kombu

    with kombu.Connection(url) as conn:
        for _ in range(100):
            channel = conn.channel()
            try:
                channel.queue_declare(queue=queue, passive=True)
                return
            except Exception:
                time.sleep(0.05)
            finally:
                channel.close() if channel.is_open else None
    raise AssertionError(f"the queue agent did not declare {queue}")


def queue_declare(url: str, name: str) -> None:
    import kombu

    with kombu.Connection(url) as conn:
        conn.default_channel.queue_declare(queue=name, durable=True, auto_delete=False)


@pytest.fixture
def idle_queue(relay, alice, native_payload):
    """A native agent whose A2A queue exists and nobody consumes."""
    queue = f"test.{relay['run']}.idle"
    relay["queues"].append(queue)
    queue_declare(relay["broker"], queue)
    payload = native_payload(
        name="Idle",
        endpoints=[{"name": "jobs", "transport": "Amqp", "protocol": "A2A", "address": queue}],
    )
    agent = alice.post("/agents", payload, format="json").json()
    return {"queue": queue, "endpoint": agent["endpoints"][0]["id"]}


def queue_take(url: str, name: str) -> list:
    """The messages waiting on ``name`` now, taken off it (headers, properties, body)."""
    import kombu

    taken = []
    with kombu.Connection(url) as conn:
        while (message := conn.default_channel.basic_get(name, no_ack=True)) is not None:
            taken.append(message)
    return taken
