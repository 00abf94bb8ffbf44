"""Fixtures of the A2A tests that reach the local HTTPS and DNS test servers (their modules
load ``tests.https_server`` and ``tests.dns_server`` as plugins)."""

import os

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
    except Exception as exc:  # noqa: BLE001 (any failure means no broker to test against)
        reason = f"no RabbitMQ on 127.0.0.1:5672 ({type(exc).__name__})"
        if os.environ.get("QUEUE_RELAY_TESTS_REQUIRED") == "1":
            pytest.fail(f"the queue relay's tests must run here: {reason}")
        pytest.skip(reason)
    return RABBITMQ_URL


def queues_delete(url: str, names: list[str]) -> None:
    import kombu

    with kombu.Connection(url) as conn:
        for name in names:
            channel = conn.channel()
            try:
                channel.queue_delete(queue=name)
            except Exception:  # noqa: BLE001 (already gone)
                pass
            finally:
                try:
                    channel.close()
                except Exception:  # noqa: BLE001
                    pass


@pytest.fixture
def relay(rabbitmq, settings, live_server):
    """The relay set up for one test: its own reply and dead-letter queues on the local
    RabbitMQ (parallel runs do not share them), the registry at the live server, and the
    relay consumer running in a thread; the queues are deleted afterwards."""
    import threading
    import uuid

    from a2a.relay_consumer import relay_consume

    run = uuid.uuid4().hex[:12]
    settings.REGISTRY_BASE_URL = live_server.url
    settings.QUEUE_RELAY_BROKER_URL = rabbitmq
    settings.QUEUE_RELAY_REPLY_QUEUE = f"test.{run}.replies"
    settings.QUEUE_RELAY_DEAD_LETTER_QUEUE = f"test.{run}.dead"
    settings.QUEUE_RELAY_WAIT_SECONDS = 10
    stop = threading.Event()
    consumer = threading.Thread(target=relay_consume, args=(stop,), daemon=True)
    consumer.start()
    state = {"run": run, "url": live_server.url, "queues": [], "stop": stop}
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
