"""The queue relay's side of the broker (``QUEUE_RELAY_BROKER_URL``, AMQP through kombu).

``request_publish`` puts one A2A request on an agent's queue and returns only once the
broker confirmed it (publisher confirms): the queue is declared passively and the message
published ``mandatory``, so a queue that is not there is an error, never a message sent
nowhere; the relay never creates an agent's queue. ``reply_publish`` is the agent's side
(``protocols.a2a.relay.queue_agent``). Errors name the queue, never the broker's address or
password.
"""

import json
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import amqp
import kombu
from django.conf import settings
from kombu.exceptions import KombuError

from protocols.a2a.relay.metrics import published
from protocols.a2a.relay.tracing import context_headers
from registry.access.auth import KEY_PREFIX
from registry.http.tracing import span

logger = logging.getLogger(__name__)

METHOD_HEADER = "a2a-method"
# The task's context id, on every request (a CancelTask's params do not carry it).
CONTEXT_HEADER = "a2a-context-id"
# The header of a dead-lettered reply saying why the relay could not use it.
REASON_HEADER = "x-relay-reason"
# The task's reply secret: on every request published for it; a reply must echo it (the
# relay applies no reply without it: any broker client may publish to the reply queue).
SECRET_HEADER = "x-relay-secret"
CONNECT_SECONDS = 3
CONFIRM_SECONDS = 5
# Request headers forwarded to the agent as message headers (the agent enforces its own
# security schemes); Authorization only when it is not the caller's registry API key.
FORWARDED_PREFIX = "a2a-"
# What a broker or its connection raises when it cannot take a message.
BROKER_ERRORS = (OSError, amqp.exceptions.AMQPError, KombuError, TimeoutError)


class BrokerUnavailable(Exception):
    """The broker did not take the message: unreachable, the queue missing, or the
    message not confirmed. The text is safe to show: it names the queue only."""


def broker_connection() -> kombu.Connection:
    return kombu.Connection(
        settings.QUEUE_RELAY_BROKER_URL,
        connect_timeout=CONNECT_SECONDS,
        heartbeat=0,
        transport_options={"confirm_publish": True},
    )


# Connections kept between requests (any thread takes one), at most POOL_SIZE idle.
POOL_SIZE = 8
_idle: dict[str, list[kombu.Connection]] = {}
_idle_lock = threading.Lock()


def _connection_take() -> kombu.Connection:
    with _idle_lock:
        kept = _idle.get(settings.QUEUE_RELAY_BROKER_URL)
        conn = kept.pop() if kept else None
    if conn is not None and conn.connected:
        return conn
    conn = broker_connection()
    conn.connect()
    reply_queues_declare(conn.default_channel)
    return conn


def _connection_return(conn: kombu.Connection) -> None:
    with _idle_lock:
        kept = _idle.setdefault(settings.QUEUE_RELAY_BROKER_URL, [])
        if len(kept) < POOL_SIZE:
            kept.append(conn)
            return
    _connection_drop(conn)


def _connection_drop(conn: kombu.Connection) -> None:
    with suppress(*BROKER_ERRORS):  # already broken
        conn.release()


@contextmanager
def _channel() -> Iterator[Any]:
    """A fresh channel on a kept connection; the connection is kept again afterwards
    unless the broker failed it."""
    conn = _connection_take()
    try:
        channel = conn.channel()
        try:
            yield channel
        finally:
            with suppress(*BROKER_ERRORS):  # closed by the broker (a missing queue's declare)
                channel.close()
    except BROKER_ERRORS as exc:
        if not isinstance(exc, amqp.exceptions.ChannelError):
            _connection_drop(conn)
            raise
        _connection_return(conn)
        raise
    _connection_return(conn)


def confirmed_publish(channel, queue: str, body: bytes, properties: dict, headers: dict) -> None:
    returned: list[str] = []

    def on_return(exc, *rest) -> None:
        returned.append(str(exc))

    channel.events["basic_return"].add(on_return)
    try:
        _publish_returned(channel, queue, body, properties, headers)
    finally:
        channel.events["basic_return"].discard(on_return)
    if returned:  # the broker could not route it (the queue went away meanwhile)
        raise amqp.exceptions.NotFound(returned[0])


def _publish_returned(channel, queue: str, body: bytes, properties: dict, headers: dict) -> None:
    channel.queue_declare(queue=queue, passive=True)
    message = channel.prepare_message(
        body,
        content_type="application/json",
        content_encoding="utf-8",
        headers=headers,
        properties={"delivery_mode": 2, "message_id": str(uuid.uuid4()), **properties},
    )
    channel.basic_publish_confirm(
        message, exchange="", routing_key=queue, mandatory=True, confirm_timeout=CONFIRM_SECONDS
    )


def message_publish(queue: str, payload: dict, *, properties: dict, headers: dict) -> None:
    """Publish ``payload`` as a persistent JSON message to ``queue`` and wait for the
    broker's confirmation; BrokerUnavailable when it is not taken. A broken kept connection
    is replaced once."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    for attempt in (1, 2):
        try:
            with _channel() as channel:
                confirmed_publish(channel, queue, body, properties, headers)
            return
        except amqp.exceptions.NotFound:
            raise BrokerUnavailable(f"The queue {queue!r} does not exist on the broker.") from None
        except amqp.exceptions.MessageNacked:
            raise BrokerUnavailable(f"The broker refused the message for {queue!r}.") from None
        except BROKER_ERRORS as exc:
            if attempt == 2:
                # The exception's type only: its text may hold the broker's address.
                logger.warning("The relay broker did not answer: %s.", type(exc).__name__)
                raise BrokerUnavailable("The queue broker cannot be reached.") from None


def is_registry_key(authorization: str) -> bool:
    """Whether an Authorization value carries a registry API key (``Bearer rk_…``, any
    case and spacing, or the bare key)."""
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() == "bearer":
        return token.strip().startswith(KEY_PREFIX)
    return scheme.startswith(KEY_PREFIX)


def forwarded_headers(headers: dict[str, str]) -> dict[str, str]:
    """The caller's headers the agent gets: A2A-* always, Authorization unless it carries
    a registry API key; never X-Api-Key (registry keys stay with the registry)."""
    forwarded = {
        name: value for name, value in headers.items() if name.lower().startswith(FORWARDED_PREFIX)
    }
    authorization = headers.get("authorization", "")
    if authorization and not is_registry_key(authorization):
        forwarded["authorization"] = authorization
    return forwarded


def request_publish(
    queue: str,
    *,
    task_id: str,
    context_id: str,
    method: str,
    params: dict,
    headers: dict[str, str],
    reply_secret: str,
) -> None:
    """An A2A request on an agent's queue: a JSON-RPC 2.0 request object whose id, and the
    message's correlation id, are the task's id; replies go to the registry's reply queue,
    echoing ``reply_secret``."""
    with span("relay publish", "producer", **{"messaging.system": "rabbitmq"}):
        try:
            message_publish(
                queue,
                {"jsonrpc": "2.0", "id": task_id, "method": method, "params": params},
                properties={
                    "correlation_id": task_id,
                    "reply_to": settings.QUEUE_RELAY_REPLY_QUEUE,
                },
                headers={
                    **headers,
                    **context_headers(),
                    METHOD_HEADER: method,
                    CONTEXT_HEADER: context_id,
                    SECRET_HEADER: reply_secret,
                },
            )
        except BrokerUnavailable:
            published.labels("refused").inc()
            raise
    published.labels("published").inc()


def reply_queues_declare(channel) -> None:
    """The registry's own queues (durable): the reply queue, declared before any request is
    published so that no reply is lost before the relay consumer first runs, and the
    dead-letter queue (``dead_letter_queue_declare``)."""
    channel.queue_declare(queue=settings.QUEUE_RELAY_REPLY_QUEUE, durable=True, auto_delete=False)
    dead_letter_queue_declare(channel)


def dead_letter_queue_declare(channel) -> None:
    """The dead-letter queue, at most QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH messages (the
    oldest dropped first). RabbitMQ refuses to declare a queue again with other arguments
    (one declared before the cap, or with another) and closes the channel: that is tried on
    a channel of its own, and such a queue is used as it is, with a warning saying how to
    cap it (delete it, or a policy)."""
    name, most = settings.QUEUE_RELAY_DEAD_LETTER_QUEUE, settings.QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH
    trial = channel.connection.channel()
    try:
        trial.queue_declare(
            queue=name, durable=True, auto_delete=False, arguments={"x-max-length": most}
        )
    except amqp.exceptions.PreconditionFailed:
        logger.warning(
            "The dead-letter queue %s exists with other arguments than x-max-length=%d "
            "(QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH): used as it is. Delete it once empty, or "
            "cap it with a policy (rabbitmqctl set_policy ... max-length).",
            name,
            most,
        )
    finally:
        with suppress(*BROKER_ERRORS):  # closed by the broker on a refusal
            trial.close()


def reply_publish(
    channel,
    reply_to: str,
    correlation_id: str,
    payload: dict,
    *,
    reply_secret: str,
    echoed: dict | None = None,
) -> None:
    """An agent's reply on ``channel`` (one of its connection's): a JSON-RPC 2.0 response
    with the request's correlation id and reply secret, persistent, confirmed by the broker;
    ``echoed``: the request's id and trace context headers, sent back."""
    confirmed_publish(
        channel,
        reply_to,
        json.dumps(payload, separators=(",", ":")).encode(),
        {"correlation_id": correlation_id},
        {**(echoed or {}), SECRET_HEADER: reply_secret},
    )
