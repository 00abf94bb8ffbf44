"""The relay consumer (``manage.py relay_consume``, a line of the Procfile): reads the agents'
replies from QUEUE_RELAY_REPLY_QUEUE and stores each with its task (``protocols.a2a.relay.store``).
 A reply is a JSON-RPC 2.0 response whose message carries the task's id as its correlation
id: ``result`` one of A2A's stream events (``{"task": …}``, ``{"message": …}``,
``{"statusUpdate": …}``, ``{"artifactUpdate": …}``, or the bare object), validated with
a2a-sdk's types, or ``error``. A reply the relay cannot use goes to
QUEUE_RELAY_DEAD_LETTER_QUEUE with the reason in the ``x-relay-reason`` header, and is
acknowledged only once the dead-letter queue took it: nothing is lost and nothing stops the
consumer. A broker that goes away is waited for.
"""

import json
import logging
import threading
import time

import kombu
from a2a.types.a2a_pb2 import StreamResponse
from a2a.utils.proto_utils import validate_proto_required_fields
from django.conf import settings
from django.db import DatabaseError, close_old_connections
from google.protobuf.json_format import ParseDict, ParseError

from protocols.a2a.relay.broker import (
    BROKER_ERRORS,
    REASON_HEADER,
    SECRET_HEADER,
    broker_connection,
    confirmed_publish,
    reply_queues_declare,
)
from protocols.a2a.relay.metrics import replies
from protocols.a2a.relay.store import reply_apply
from protocols.a2a.relay.tracing import reply_context

logger = logging.getLogger(__name__)

PREFETCH = 20
EVENT_KINDS = {
    "task": "task",
    "message": "message",
    "statusUpdate": "status_update",
    "artifactUpdate": "artifact_update",
}
RETRY_MAX_SECONDS = 30


class ReplyRefused(Exception):
    """Why a reply cannot be used (the dead letter's reason)."""


def _kind_of_bare(result: dict) -> str:
    """The stream event a bare result is, by its required members."""
    if "messageId" in result:
        return "message"
    if "taskId" in result and "artifact" in result:
        return "artifactUpdate"
    if "taskId" in result and "status" in result:
        return "statusUpdate"
    if "status" in result:
        return "task"
    raise ReplyRefused("invalid-result: not a Task, Message, status or artifact update")


def reply_event(result) -> StreamResponse:
    """A reply's ``result`` as an a2a-sdk ``StreamResponse``; ReplyRefused when invalid."""
    if not isinstance(result, dict):
        raise ReplyRefused("invalid-result: not an object")
    if len(result) == 1 and next(iter(result)) in EVENT_KINDS:
        wrapped = result
    else:
        wrapped = {_kind_of_bare(result): result}
    try:
        event = ParseDict(wrapped, StreamResponse(), ignore_unknown_fields=True)
        validate_proto_required_fields(getattr(event, EVENT_KINDS[next(iter(wrapped))]))
    except (ParseError, ValueError, TypeError) as exc:
        raise ReplyRefused(f"invalid-result: {str(exc)[:300]}") from None
    except Exception as exc:  # the SDK's InvalidParamsError for a missing required member
        raise ReplyRefused(f"invalid-result: {str(exc)[:300]}") from None
    return event


def _error_of(error) -> dict:
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), int)
        or not isinstance(error.get("message"), str)
    ):
        raise ReplyRefused("invalid-error: error needs an integer code and a string message")
    return {"code": error["code"], "message": error["message"][:2000]}


def reply_handle(body: bytes, correlation_id: str | None, secret: str = "") -> None:
    """Store one reply with its task; ReplyRefused saying why it cannot be. ``secret``:
    the reply secret it echoes (the task's, or it changes nothing)."""
    if not correlation_id:
        raise ReplyRefused("no-correlation-id")
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ReplyRefused("not-json") from None
    if not isinstance(doc, dict) or doc.get("jsonrpc") != "2.0":
        raise ReplyRefused("not-a-json-rpc-response")
    if "error" in doc:
        refused = reply_apply(
            correlation_id, secret=secret, event=None, error=_error_of(doc["error"])
        )
    elif "result" in doc:
        refused = reply_apply(
            correlation_id, secret=secret, event=reply_event(doc["result"]), error=None
        )
    else:
        raise ReplyRefused("not-a-json-rpc-response: neither result nor error")
    if refused:
        raise ReplyRefused(refused)


def _secret_of(message) -> str:
    secret = (message.headers or {}).get(SECRET_HEADER, "")
    return secret.decode("utf-8", "replace") if isinstance(secret, bytes) else str(secret)


def dead_letter(channel, message, reason: str) -> None:
    # Without the secret: whoever reads the dead letters need not be able to answer tasks.
    headers = {**(message.headers or {}), REASON_HEADER: reason}
    headers.pop(SECRET_HEADER, None)
    properties = {}
    if message.properties.get("correlation_id"):
        properties["correlation_id"] = message.properties["correlation_id"]
    confirmed_publish(
        channel, settings.QUEUE_RELAY_DEAD_LETTER_QUEUE, message.body, properties, headers
    )


def _on_message(channel, message) -> None:
    close_old_connections()
    with reply_context(message.headers):
        outcome = _reply_take(channel, message)
    replies.labels(outcome).inc()


def _reply_take(channel, message) -> str:
    try:
        reply_handle(message.body, message.properties.get("correlation_id"), _secret_of(message))
        outcome = "applied"
    except ReplyRefused as exc:
        logger.warning("Reply %s dead-lettered: %s.", message.properties.get("correlation_id"), exc)
        dead_letter(channel, message, str(exc))
        outcome = "dead-lettered"
    except DatabaseError:
        # The database is away: the reply waits on the queue for the next try.
        logger.exception("Could not store a reply; it stays on the queue.")
        message.requeue()
        time.sleep(1)
        return "requeued"
    except Exception as exc:  # a reply no rule foresaw must not stop the consumer
        logger.exception("Reply refused by an unexpected error.")
        dead_letter(channel, message, f"relay-error: {type(exc).__name__}")
        outcome = "dead-lettered"
    message.ack()
    return outcome


def _consume(conn: kombu.Connection, stop: threading.Event) -> None:
    channel = conn.channel()
    reply_queues_declare(channel)
    channel.basic_qos(0, PREFETCH, False)
    queue = kombu.Queue(settings.QUEUE_RELAY_REPLY_QUEUE, channel=channel, no_declare=True)
    # Dead letters go out on a connection of their own: waiting for a confirmation on the
    # consuming one would take the next reply in the middle of this one.
    with (
        broker_connection() as publisher,
        kombu.Consumer(
            channel,
            queues=[queue],
            on_message=lambda m: _on_message(publisher.default_channel, m),
            no_ack=False,
        ),
    ):
        logger.info("Relaying replies from %s.", settings.QUEUE_RELAY_REPLY_QUEUE)
        while not stop.is_set():
            try:
                conn.drain_events(timeout=0.5)
            except TimeoutError:
                continue


def relay_consume(stop: threading.Event | None = None) -> None:
    """Consume replies until ``stop`` is set, waiting for the broker when it is away."""
    stop = stop or threading.Event()
    pause = 1.0
    while not stop.is_set():
        try:
            with broker_connection() as conn:
                conn.connect()
                pause = 1.0
                _consume(conn, stop)
        except BROKER_ERRORS as exc:
            # The exception's type only: its text may hold the broker's address.
            logger.warning(
                "The relay's broker is not reachable (%s); trying again in %.0f s.",
                type(exc).__name__,
                pause,
            )
            stop.wait(pause)
            pause = min(pause * 2, RETRY_MAX_SECONDS)
