"""The queue relay: a queue endpoint's URL, ``<base>/a2a/queue/<endpointId>``, answers A2A
1.0 (JSON-RPC at the URL, HTTP+JSON under it) with a2a-sdk's routes over a request handler
that relays to the agent's AMQP queue (``protocols.a2a.relay.broker``) and keeps the tasks in the
database (``protocols.a2a.relay.store``); the relay consumer (``protocols.a2a.relay.consumer``)
stores the agent's replies. ``GET`` on the URL still gives the endpoint's connection details.
 Nothing is half-done: a task exists once the broker confirmed its request; a broker that
does not take it is a 503 problem (HTTP+JSON) or a JSON-RPC error with
``error.data.retryAfter``, with ``Retry-After`` either way.
"""

import asyncio
import time
import uuid

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler, validate_request_params
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.task import apply_history_length
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from google.protobuf.json_format import MessageToDict
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from starlette.applications import Starlette

from protocols.a2a.face.agent import _not_here, _unreadable
from protocols.a2a.face.list_params import list_params_check, list_query_problem
from protocols.a2a.relay import store as store
from protocols.a2a.relay.answers import forwarded_headers_check, relay_outcome, relay_problem
from protocols.a2a.relay.broker import BrokerUnavailable, forwarded_headers, request_publish
from protocols.a2a.relay.queues import queue_name_reserved
from protocols.a2a.relay.waits import Release, WaitRefused, web_waits
from registry.access.counters import client_ip
from registry.agents.models import Agent, Endpoint
from registry.agents.visibility import may_read, request_reader
from registry.fastpath.bridge import asgi_response, json_body_problem, request_refusal
from registry.http.params import parse_uuid
from registry.http.problems import ProblemError

# The longest pause between two looks at a waited-for task (the web process's; the async
# server, with many waits on its one database thread, looks less often).
POLL_MAX_SECONDS = 0.05
NO_STREAMING = "The queue relay answers without streaming (the card says streaming: false)."


class QueueRelayHandler(RequestHandler):
    """A2A's operations for one queue endpoint. Made for each request; ``unavailable``
    says why the broker did not take the request, when it did not; ``refused``, that a
    call that would wait found no waiting place in ``waits`` (``protocols.a2a.relay.waits``)
    for ``client`` (an address), so nothing was made or sent."""

    def __init__(
        self, endpoint: Endpoint, *, waits=web_waits, client: str = "", poll_max: float = 0
    ) -> None:
        self.endpoint = endpoint
        self.waits, self.client = waits, client
        self.poll_max = poll_max or POLL_MAX_SECONDS
        self.unavailable: str | None = None
        self.refused: WaitRefused | None = None

    def _hold(self) -> Release:
        """A waiting place, taken before anything is made or published; else refused."""
        try:
            return self.waits.take(self.client)
        except WaitRefused as exc:
            self.refused = exc
            raise InternalError(message=exc.detail) from None

    def _caller(self, context: ServerCallContext) -> tuple[str, dict[str, str]]:
        headers = context.state.get("headers") or {}
        return store.relay_scope(headers), forwarded_headers(headers)

    async def _anonymous_check(self) -> None:
        """A task without credentials may be made only within the anonymous limits: else
        refused, nothing stored or published."""
        try:
            await sync_to_async(store.anonymous_task_allowed)(self.client)
        except WaitRefused as exc:
            self.refused = exc
            raise InternalError(message=exc.detail) from None

    async def _publish(
        self, task: Task, method: str, params: dict, headers: dict, secret: str = ""
    ) -> None:
        secret = secret or await sync_to_async(store.task_reply_secret)(task.id)
        try:
            await sync_to_async(request_publish)(
                self.endpoint.address,
                task_id=task.id,
                context_id=task.context_id,
                method=method,
                params=params,
                headers=headers,
                reply_secret=secret,
            )
        except BrokerUnavailable as exc:
            self.unavailable = str(exc)
            raise InternalError(message=str(exc)) from None

    async def _task(self, task_id: str, scope: str) -> Task:
        task = await sync_to_async(store.task_get)(
            task_id, endpoint_id=self.endpoint.id, scope=scope
        )
        if task is None:
            raise TaskNotFoundError(message=f"There is no task {task_id} here for this caller.")
        return task

    async def _wait(self, task_id: str, since, *, final_only: bool = False) -> None:
        """Until a reply after ``since`` settles the task (final, or interrupted unless
        ``final_only``), or QUEUE_RELAY_WAIT_SECONDS pass."""
        deadline = time.monotonic() + settings.QUEUE_RELAY_WAIT_SECONDS
        pause = 0.01
        while time.monotonic() < deadline:
            if await sync_to_async(store.task_settled)(task_id, since, final_only=final_only):
                return
            await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 1.5, self.poll_max)

    @validate_request_params
    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task:
        if params.configuration.return_immediately:
            return await self._message_send(params, context)
        release = self._hold()
        try:
            return await self._message_send(params, context)
        finally:
            release()

    async def _message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task:
        scope, headers = self._caller(context)
        message = params.message
        since = timezone.now()
        if message.task_id:  # a follow-up to the caller's task (input-required, …)
            task = await self._task(message.task_id, scope)
            if store.task_is_final(task):
                raise UnsupportedOperationError(message=f"The task {task.id} is finished.")
            await sync_to_async(store.task_method_set)(task.id, "SendMessage")
            await self._publish(task, "SendMessage", MessageToDict(params), headers)
        else:
            message.context_id = message.context_id or str(uuid.uuid4())
            task = Task(id=str(uuid.uuid4()), context_id=message.context_id)
            task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
            task.status.timestamp.GetCurrentTime()
            task.history.append(message)
            if not scope:
                await self._anonymous_check()
            secret = await sync_to_async(store.task_pending_create)(
                task, endpoint_id=self.endpoint.id, scope=scope
            )
            try:
                await self._publish(task, "SendMessage", MessageToDict(params), headers, secret)
            except InternalError:
                await sync_to_async(store.task_abandon)(task.id)
                raise
            await sync_to_async(store.task_confirm)(task.id)
        if params.configuration.return_immediately:
            if not message.task_id:  # the task as made: submitted, whatever came since
                return apply_history_length(task, params.configuration)
        else:
            await self._wait(task.id, since)
        return apply_history_length(await self._task(task.id, scope), params.configuration)

    @validate_request_params
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        scope, _ = self._caller(context)
        return apply_history_length(await self._task(params.id, scope), params)

    @validate_request_params
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        list_params_check(params)
        scope, _ = self._caller(context)
        return await sync_to_async(store.tasks_list)(
            params, endpoint_id=self.endpoint.id, scope=scope
        )

    @validate_request_params
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        """Relayed to the agent as a CancelTask request; answered with the task once the
        agent canceled it, or as it stands after QUEUE_RELAY_WAIT_SECONDS."""
        scope, headers = self._caller(context)
        task = await self._task(params.id, scope)
        if store.task_is_final(task):
            raise TaskNotCancelableError(message=f"The task {task.id} is finished.")
        release = self._hold()
        try:
            since = timezone.now()
            await sync_to_async(store.task_method_set)(task.id, "CancelTask")
            await self._publish(task, "CancelTask", MessageToDict(params), headers)
            await self._wait(task.id, since, final_only=True)
        finally:
            release()
        return await self._task(task.id, scope)

    async def on_message_send_stream(self, params, context):
        raise UnsupportedOperationError(message=NO_STREAMING)
        yield  # an async generator, as the interface's

    async def on_subscribe_to_task(self, params, context):
        raise UnsupportedOperationError(message=NO_STREAMING)
        yield

    async def on_create_task_push_notification_config(self, params, context):
        raise PushNotificationNotSupportedError()

    async def on_get_task_push_notification_config(self, params, context):
        raise PushNotificationNotSupportedError()

    async def on_list_task_push_notification_configs(self, params, context):
        raise PushNotificationNotSupportedError()

    async def on_delete_task_push_notification_config(self, params, context):
        raise PushNotificationNotSupportedError()

    async def on_get_extended_agent_card(self, params, context):
        raise ExtendedAgentCardNotConfiguredError()


def relay_app(handler: QueueRelayHandler, url_path: str) -> Starlette:
    routes = [
        *create_jsonrpc_routes(handler, url_path),
        *create_rest_routes(handler, path_prefix=url_path),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_here, 405: _not_here})


def relay_endpoint(endpoint_id: str, request) -> Endpoint:
    """The queue endpoint, if the request's caller may read its agent: a restricted agent's
    (registry.agents.visibility) is an unknown endpoint to anyone else, details and relay."""
    pk = parse_uuid(endpoint_id, "endpoint")
    endpoint = Endpoint.objects.filter(pk=pk).select_related("agent").first()
    if (
        endpoint is None
        or not endpoint.is_queue
        or (
            endpoint.agent.visibility != Agent.Visibility.PUBLIC
            and not may_read(request_reader(request), endpoint.agent)
        )
    ):
        raise ProblemError(404, "not-found", f"There is no queue endpoint {endpoint_id}.")
    return endpoint


def endpoint_details(endpoint: Endpoint) -> dict:
    """What GET on a queue endpoint's URL answers: its connection details."""
    return {
        "endpointId": str(endpoint.id),
        "agentId": str(endpoint.agent_id),
        "name": endpoint.name,
        "transport": endpoint.transport,
        "protocol": endpoint.protocol,
        "address": endpoint.address,
        "livenessModel": endpoint.liveness_model,
        "protocolMetadata": endpoint.protocol_metadata,
        "relayed": endpoint.transport == Endpoint.Transport.AMQP
        and endpoint.protocol == Endpoint.Protocol.A2A,
    }


def relay_prelude(request: HttpRequest, endpoint_id: str, path: str) -> Endpoint | HttpResponse:
    """The relayed endpoint of a request to hand to the SDK, or the answer refusing it
    (both the web process's view and the async server's application ask this)."""
    url_path = f"/a2a/queue/{endpoint_id}"
    refused = request_refusal(request, post_to=None if path else url_path)
    if refused is not None:
        return refused
    endpoint = relay_endpoint(endpoint_id, request)
    if endpoint.transport != Endpoint.Transport.AMQP or endpoint.protocol != Endpoint.Protocol.A2A:
        raise ProblemError(
            404,
            "not-found",
            f"The queue endpoint {endpoint_id} is not relayed (only A2A over AMQP is); "
            "GET its URL for its connection details.",
        )
    if endpoint.agent.status == Agent.Status.RETIRED or queue_name_reserved(endpoint.address):
        # A retired agent's queue name may be another owner's now; a reserved name was
        # refused at every write since, but may be older.
        raise ProblemError(404, "not-found", f"The queue endpoint {endpoint_id} is not relayed.")
    forwarded_headers_check(request)
    problem = json_body_problem(request)
    if problem is not None:
        return _unreadable(problem, rest=bool(path))
    return list_query_problem(request, path) or endpoint


def relay_view(request: HttpRequest, endpoint_id: str, path: str = "") -> HttpResponse:
    """POST <base>/a2a/queue/<id> (JSON-RPC) and <base>/a2a/queue/<id>/... (HTTP+JSON), in
    the web process: a call that would wait takes one of its few waiting places."""
    endpoint = relay_prelude(request, endpoint_id, path)
    if isinstance(endpoint, HttpResponse):
        return endpoint
    handler = QueueRelayHandler(endpoint, waits=web_waits, client=client_ip(request))
    response = asgi_response(relay_app(handler, f"/a2a/queue/{endpoint_id}"), request)
    return relay_outcome(handler, response, rest=bool(path))


class QueueEndpointView(APIView):
    """A queue endpoint's URL: its connection details (GET); for an AMQP endpoint of
    protocol A2A, the A2A relay to its queue (POST: JSON-RPC; HTTP+JSON under the URL).
    No API key is needed: a key (or any Authorization) only binds the tasks it creates."""

    # POST is served ahead of DRF (the caller's Authorization is the agent's business).
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def dispatch(self, request, *args, **kwargs):
        if request.method == "POST":
            try:
                return relay_view(request, kwargs["endpoint_id"])
            except ProblemError as exc:
                return relay_problem(exc)
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(responses={200: OpenApiResponse(description="Queue connection details.")})
    def get(self, request: Request, endpoint_id: str) -> Response:
        return Response(endpoint_details(relay_endpoint(endpoint_id, request)))

    @extend_schema(
        request=dict,
        auth=[],
        responses={
            200: OpenApiResponse(
                description="An A2A 1.0 JSON-RPC request (SendMessage, GetTask, CancelTask, "
                "ListTasks) relayed to the agent's AMQP queue; the JSON-RPC response. "
                "HTTP+JSON is served under this URL (message:send, tasks/{id}, "
                "tasks/{id}:cancel, tasks; there a broker that does not take the request "
                "is a 503 queue-unavailable problem). Here it is a JSON-RPC error with "
                "error.data.retryAfter; a Retry-After header either way."
            )
        },
    )
    def post(self, request: Request, endpoint_id: str) -> HttpResponse:
        return relay_view(request._request, endpoint_id)  # dispatch serves POST; this documents it


def relay_rest_view(request: HttpRequest, endpoint_id: str, path: str) -> HttpResponse:
    try:
        return relay_view(request, endpoint_id, path)
    except ProblemError as exc:
        return relay_problem(exc)
