"""The dead-letter queue on the local RabbitMQ: capped in length (the oldest dropped first),
and a queue declared before the cap (RabbitMQ refuses to declare it again with other
arguments) is used as it is, with a warning, without breaking the connection."""

import logging
import uuid

import kombu
import pytest

from protocols.a2a.relay.broker import reply_queues_declare
from tests.protocols.a2a.conftest import queue_take, queues_delete


@pytest.fixture
def own_queues(rabbitmq, settings):
    run = uuid.uuid4().hex[:12]
    settings.QUEUE_RELAY_BROKER_URL = rabbitmq
    settings.QUEUE_RELAY_REPLY_QUEUE = f"test.{run}.replies"
    settings.QUEUE_RELAY_DEAD_LETTER_QUEUE = f"test.{run}.dead"
    yield settings
    queues_delete(
        rabbitmq, [settings.QUEUE_RELAY_REPLY_QUEUE, settings.QUEUE_RELAY_DEAD_LETTER_QUEUE]
    )


def put(conn: kombu.Connection, queue: str, bodies: list[bytes]) -> None:
    channel = conn.channel()
    for body in bodies:
        channel.basic_publish(channel.prepare_message(body), exchange="", routing_key=queue)
    channel.close()


def test_the_dead_letter_queue_keeps_the_newest_up_to_its_cap(own_queues, rabbitmq):
    own_queues.QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH = 3
    dead = own_queues.QUEUE_RELAY_DEAD_LETTER_QUEUE
    with kombu.Connection(rabbitmq) as conn:
        reply_queues_declare(conn.default_channel)
        put(conn, dead, [b"%d" % n for n in range(5)])

    assert [m.body for m in queue_take(rabbitmq, dead)] == [b"2", b"3", b"4"]


def test_a_dead_letter_queue_declared_before_the_cap_is_used_as_it_is(own_queues, rabbitmq, caplog):
    dead = own_queues.QUEUE_RELAY_DEAD_LETTER_QUEUE
    with kombu.Connection(rabbitmq) as conn:
        conn.default_channel.queue_declare(queue=dead, durable=True, auto_delete=False)
        with caplog.at_level(logging.WARNING, logger="protocols.a2a.relay.broker"):
            reply_queues_declare(conn.default_channel)
            reply_queues_declare(conn.default_channel)  # the channel it was given still works
        put(conn, dead, [b"kept"])

    assert [m.body for m in queue_take(rabbitmq, dead)] == [b"kept"]
    assert "QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH" in caplog.text
