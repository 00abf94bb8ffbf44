"""Serve an a2a-sdk ``AgentExecutor`` from an AMQP queue: the agent's side of the queue
relay, for agents behind a firewall (they open one outbound connection to the broker).

    from protocols.a2a.relay.queue_agent import QueueAgent
    QueueAgent(MyExecutor(), "invoices.extract", broker_url="amqp://…").run()

(or ``manage.py queue_agent <queue> --executor package.module:Class``). Each request on
the queue (a JSON-RPC 2.0 request, README "The queue relay") runs the executor with the
request's correlation id as the task id and its message headers (the caller's
Authorization and A2A-* headers) as the call context's ``headers``; every event the
executor enqueues is published at once as a reply to the request's ``reply_to``, with the
same correlation id and the request's ``x-relay-secret`` header echoed (the registry
applies no reply without it). The request is acknowledged after its replies were confirmed by the
broker: a request is handled at least once. The agent owns its queue and declares it
(durable).
"""

import asyncio
import json
import logging
import threading

import kombu
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event, EventQueue
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    Message,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from protocols.a2a.relay.broker import (
    BROKER_ERRORS,
    CONTEXT_HEADER,
    SECRET_HEADER,
    reply_publish,
)
from protocols.a2a.relay.tracing import (
    echoed,
)

logger = logging.getLogger(__name__)

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603


def stream_response(event: Event) -> dict:
    """An executor's event as a reply's ``result``: A2A 1.0's stream response JSON."""
    if isinstance(event, Task):
        wrapped = StreamResponse(task=event)
    elif isinstance(event, Message):
        wrapped = StreamResponse(message=event)
    elif isinstance(event, TaskArtifactUpdateEvent):
        wrapped = StreamResponse(artifact_update=event)
    else:
        wrapped = StreamResponse(status_update=event)
    return MessageToDict(wrapped, preserving_proto_field_name=False)


class ReplyQueue(EventQueue):
    """The executor's event queue: each event goes out as a reply at once."""

    def __init__(
        self, channel, reply_to: str, correlation_id: str, secret: str, echoed: dict
    ) -> None:
        self.channel, self.reply_to, self.correlation_id = channel, reply_to, correlation_id
        self.secret, self.echoed = secret, echoed

    def reply(self, payload: dict) -> None:
        payload = {"jsonrpc": "2.0", "id": self.correlation_id, **payload}
        reply_publish(
            self.channel,
            self.reply_to,
            self.correlation_id,
            payload,
            reply_secret=self.secret,
            echoed=self.echoed,
        )

    async def enqueue_event(self, event: Event) -> None:
        self.reply({"result": stream_response(event)})


class QueueAgent:
    """Consumes ``queue`` on the broker at ``broker_url`` and runs ``executor`` for each
    request, ``prefetch`` requests in flight from the broker at a time."""

    def __init__(
        self, executor: AgentExecutor, queue: str, *, broker_url: str, prefetch: int = 10
    ) -> None:
        self.executor, self.queue, self.broker_url, self.prefetch = (
            executor,
            queue,
            broker_url,
            prefetch,
        )
        self.loop = asyncio.new_event_loop()

    async def _run(self, method: str, params: dict, headers: dict, replies: ReplyQueue) -> None:
        call = ServerCallContext(state={"headers": headers})
        task_id = replies.correlation_id
        if method == "SendMessage":
            request = ParseDict(params, SendMessageRequest(), ignore_unknown_fields=True)
            context = RequestContext(
                call,
                request=request,
                task_id=task_id,
                context_id=request.message.context_id or None,
            )
            await self.executor.execute(context, replies)
        elif method == "CancelTask":
            ParseDict(params, CancelTaskRequest(), ignore_unknown_fields=True)
            context_id = headers.get(CONTEXT_HEADER) or None
            context = RequestContext(call, task_id=task_id, context_id=context_id)
            await self.executor.cancel(context, replies)
        else:
            replies.reply({"error": {"code": METHOD_NOT_FOUND, "message": f"No method {method}."}})

    def handle(self, channel, message) -> None:
        """One request: run it, publish its replies, then acknowledge it."""
        correlation_id = message.properties.get("correlation_id")
        reply_to = message.properties.get("reply_to")
        if not correlation_id or not reply_to:
            logger.warning("A request without correlation_id or reply_to: dropped.")
            message.ack()
            return
        headers = {str(k).lower(): str(v) for k, v in (message.headers or {}).items()}
        # Echoed with every reply (the registry applies no reply without it), not the
        # executor's business.
        # The request id and trace context go back with the replies (relay.tracing).
        replies = ReplyQueue(
            channel, reply_to, correlation_id, headers.pop(SECRET_HEADER, ""), echoed(headers)
        )
        try:
            request = json.loads(message.body)
            self.loop.run_until_complete(
                self._run(request["method"], request.get("params") or {}, headers, replies)
            )
        except (ValueError, KeyError, TypeError, ParseError) as exc:
            replies.reply({"error": {"code": INVALID_PARAMS, "message": f"Bad request: {exc}"}})
        except A2AError as exc:
            code = JSON_RPC_ERROR_CODE_MAP.get(type(exc), INTERNAL_ERROR)
            replies.reply({"error": {"code": code, "message": exc.message}})
        except BROKER_ERRORS:
            raise  # the replies did not go out: the request stays on the queue
        except Exception:
            logger.exception("The executor failed on %s.", correlation_id)
            replies.reply({"error": {"code": INTERNAL_ERROR, "message": "The agent failed."}})
        message.ack()

    def run(self, stop: threading.Event | None = None) -> None:
        """Serve until ``stop`` is set, reconnecting when the broker goes away."""
        stop = stop or threading.Event()
        while not stop.is_set():
            try:
                with kombu.Connection(self.broker_url, connect_timeout=3) as conn:
                    conn.connect()
                    self._serve(conn, stop)
            except BROKER_ERRORS as exc:
                logger.warning("Broker not reachable (%s); retrying.", type(exc).__name__)
                stop.wait(2)

    def _serve(self, conn: kombu.Connection, stop: threading.Event) -> None:
        channel = conn.channel()
        channel.queue_declare(queue=self.queue, durable=True, auto_delete=False)
        channel.basic_qos(0, self.prefetch, False)
        queue = kombu.Queue(self.queue, channel=channel, no_declare=True)
        # Replies go out on a connection of their own: waiting for a reply's confirmation
        # on the consuming one would take the next request in the middle of this one.
        with (
            kombu.Connection(self.broker_url, connect_timeout=3) as publisher,
            kombu.Consumer(
                channel,
                queues=[queue],
                on_message=lambda m: self.handle(publisher.default_channel, m),
                no_ack=False,
            ),
        ):
            logger.info("Serving A2A requests from the queue %s.", self.queue)
            while not stop.is_set():
                try:
                    conn.drain_events(timeout=0.5)
                except TimeoutError:
                    continue
