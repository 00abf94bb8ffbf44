"""The registry as an A2A agent: a2a-sdk's server (its request handler, the JSON-RPC and
HTTP+JSON routes) around an ``AgentExecutor`` running the registry's two skills
(``protocols.a2a.face.skills``), with its tasks in the database (``protocols.a2a.face.task_store``).
 The SDK's routes form one ASGI application, served from Django views
(``protocols.a2a.registration.api``
through ``registry.fastpath.bridge``) at ``/a2a/jsonrpc`` and ``/a2a/rest``: the URLs of the
registry card's two interfaces.
"""

import functools
import json
import logging
import re
import uuid
from typing import Any

from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_text_parts,
    new_message,
    new_text_part,
)
from a2a.server.agent_execution import (
    AgentExecutor,
    RequestContext,
    SimpleRequestContextBuilder,
)
from a2a.server.events import EventQueue
from a2a.server.jsonrpc_models import JSONParseError
from a2a.server.request_handlers import DefaultRequestHandler, build_error_response
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCard,
    Artifact,
    Message,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import InternalError, InvalidParamsError, UnsupportedOperationError
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.timestamp_pb2 import Timestamp
from starlette.applications import Starlette
from starlette.responses import JSONResponse

from protocols.a2a.face import skills
from protocols.a2a.face.card_text import card_text
from protocols.a2a.face.list_params import list_params_check, list_query_problem
from protocols.a2a.face.task_store import DatabaseTaskStore
from protocols.a2a.registration.api import registry_card
from registry.access.auth import bearer_key
from registry.agents.visibility import key_reader
from registry.fastpath.bridge import asgi_response, asgi_scope, json_body_problem, request_refusal
from registry.http.jsonutil import strict_loads
from registry.http.problems import PROBLEM_CONTENT_TYPE, problem_body

JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
STATES = {
    "completed": TaskState.TASK_STATE_COMPLETED,
    "rejected": TaskState.TASK_STATE_REJECTED,
    "auth-required": TaskState.TASK_STATE_AUTH_REQUIRED,
}
REGISTRATION_KEYS = {"card", "domain", "url"}
# The call state's entry of a message answered before its task started.
ANSWERED = "registry.answered"
# The ASGI scope's and call state's entry of the request's body, as received.
BODY = "registry.body"
logger = logging.getLogger(__name__)


def whole_numbers(value: Any) -> Any:
    """A data part's JSON with whole numbers as integers again (A2A data parts carry
    numbers as doubles), so that a card registered through A2A is served as sent."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def _skill_of(message: Message, data: dict | None) -> str:
    asked = message.metadata.fields.get("skill") if message.HasField("metadata") else None
    if asked is not None and asked.string_value in (skills.DISCOVERY, skills.REGISTRATION):
        return asked.string_value
    if data is not None and REGISTRATION_KEYS & set(data):
        return skills.REGISTRATION
    return skills.DISCOVERY


def message_skill(message: Message) -> tuple[str, dict | None]:
    """The skill a message asks for: registration for a data part with ``card``, ``domain``
    or ``url`` (or ``metadata.skill``), discovery otherwise; and its first data part that
    is an object (None without one)."""
    data = next((d for d in get_data_parts(message.parts) if isinstance(d, dict)), None)
    return _skill_of(message, data), data


def discovery_answer(message: Message, data: dict | None, reader=None) -> skills.Answer:
    """Discovery by the first data part's filters, else by the message's text (``reader``:
    the caller's principal, for the restricted agents it may read)."""
    if data is not None:
        return skills.discover_data(whole_numbers(data), reader)
    return skills.discover_text(" ".join(get_text_parts(message.parts)), reader)


def answer_for(
    message: Message, key: str | None, body: bytes | None = None
) -> tuple[str, skills.Answer]:
    """Run the skill a message asks for (``message_skill``). Returns the skill's name and
    its answer. A card to register is read from the request's ``body`` (``card_text``),
    not from the SDK's Struct: it is stored as its JSON text was sent."""
    skill, data = message_skill(message)
    if skill == skills.REGISTRATION:
        data = whole_numbers(data or {})
        text = card_text(body) if body and isinstance(data.get("card"), dict) else None
        if text is not None:
            data["card"] = strict_loads(text)
        return skill, skills.register(data, key, text)
    return skill, discovery_answer(message, data, key_reader(key))


def data_part(data: dict[str, Any]) -> Part:
    """An answer's JSON as a data part (``Struct.update``: a quarter of the CPU of
    ``new_data_part``'s ``ParseDict`` for the same value)."""
    part = Part(media_type="application/json")
    part.data.struct_value.update(data)
    return part


def discovery_reply(answer: skills.Answer, context_id: str) -> Message:
    """The message that answers a discovery question: the summary and the found agents."""
    return new_message([new_text_part(answer.text), data_part(answer.data)], context_id=context_id)


def _now() -> Timestamp:
    stamp = Timestamp()
    stamp.GetCurrentTime()
    return stamp


class RegistryAgentExecutor(AgentExecutor):
    """Answers a discovery question with a message (nothing runs on, so no task is made),
    and every other message with a task: an artifact with the answer's data part, and a
    final status (completed, rejected or auth-required) whose message is the summary."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        answered = context.call_context.state.pop(ANSWERED, None)
        if answered is None:
            answered = await answer_checked(context.message, context.call_context.state)
        skill, answer = answered
        task = context.current_task
        if task is None and skill == skills.DISCOVERY and answer.state == "completed":
            # A2A lets an agent answer message/send with a Message: found agents are an
            # answer, not work to follow, so nothing is stored for them.
            await event_queue.enqueue_event(discovery_reply(answer, context.context_id))
            return
        parts = [data_part(answer.data)]
        if task is None:
            # A new task is answered at once: one Task event, stored once, already final.
            task = Task(id=context.task_id, context_id=context.context_id)
            task.history.append(context.message)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            task.artifacts.append(
                Artifact(artifact_id=str(uuid.uuid4()), name="result", parts=parts)
            )
            task.status.CopyFrom(
                TaskStatus(
                    state=STATES[answer.state],
                    message=updater.new_agent_message([new_text_part(answer.text)]),
                    timestamp=_now(),
                )
            )
            await event_queue.enqueue_event(task)
            return
        # A message to a task that asked for more (auth-required): answered in that task.
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact(parts, name="result")
        summary = updater.new_agent_message([new_text_part(answer.text)])
        await updater.update_status(STATES[answer.state], message=summary)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="The registry's tasks finish at once.")


async def answer_checked(message: Message, state: dict) -> tuple[str, skills.Answer]:
    """The skill's answer to a message, or the JSON-RPC error it is: internal (the
    database does not answer, or the registry failed), invalid params (a search's bad
    input: -32602, 400 on HTTP+JSON), each with the problem document in its data."""
    key = bearer_key((state.get("headers") or {}).get("authorization", ""))
    try:
        skill, answer = await sync_to_async(answer_for)(message, key, state.get(BODY))
    except Exception:
        # Never a database's (or any other) internal message on the wire: it goes to
        # the log, the client gets JSON-RPC's internal error without it.
        logger.exception("The registry agent failed to answer a message")
        raise InternalError(message="The registry failed to answer; see its log.") from None
    if skills.unavailable(answer):  # no task can be stored either: a JSON-RPC error
        raise InternalError(message=answer.text, data={"problem": answer.data["problem"]})
    if skill == skills.DISCOVERY and skills.invalid_input(answer):
        raise InvalidParamsError(message=answer.text, data={"problem": answer.data["problem"]})
    return skill, answer


class RegistryRequestHandler(DefaultRequestHandler):
    """The SDK's request handler; a new message (no task named) is answered before the SDK
    starts a task for it, so that an error answer (bad search input, an outage) is only
    the error, with no failed task stored. The executor then sends the answer."""

    async def on_list_tasks(self, params, context):
        list_params_check(params)
        return await super().on_list_tasks(params, context)

    async def on_message_send(self, params, context):
        if not params.message.task_id:
            context.state[ANSWERED] = await answer_checked(params.message, context.state)
        return await super().on_message_send(params, context)


class RegistryRequestContextBuilder(SimpleRequestContextBuilder):
    """The SDK's request contexts; a task id made for a message that names none is
    recorded as not stored yet (``DatabaseTaskStore.known_absent``), so starting the
    task reads nothing."""

    def __init__(self) -> None:
        super().__init__(should_populate_referred_tasks=False, task_store=None)

    async def build(self, context, params=None, task_id=None, context_id=None, task=None):
        built = await super().build(context, params, task_id, context_id, task)
        if task_id is None and built.task_id:
            DatabaseTaskStore.known_absent(context, built.task_id)
        return built


class RegistryCallContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call contexts, with the request's body as received (``protocol_view``
    puts it in the ASGI scope's state): a card is read again from its text."""

    def build(self, request):
        context = super().build(request)
        context.state[BODY] = request.scope.get("state", {}).get(BODY)
        return context


@functools.lru_cache(maxsize=4)
def registry_agent_card(base: str) -> AgentCard:
    return ParseDict(registry_card(base), AgentCard())


def protocol_app() -> Starlette:
    """The SDK's JSON-RPC and HTTP+JSON routes over a request handler, in one ASGI
    application. Made for each request (about a millisecond): the handler keeps its
    running tasks in memory, bound to the request's event loop, and tasks live in the
    database (a follow-up message finds its task there)."""
    handler = RegistryRequestHandler(
        agent_executor=RegistryAgentExecutor(),
        task_store=DatabaseTaskStore(),
        agent_card=registry_agent_card(settings.REGISTRY_BASE_URL),
        request_context_builder=RegistryRequestContextBuilder(),
    )
    calls = RegistryCallContextBuilder()
    routes = [
        *create_jsonrpc_routes(handler, JSONRPC_PATH, context_builder=calls),
        *create_rest_routes(handler, path_prefix=REST_PATH, context_builder=calls),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_here, 405: _not_here})


async def _not_here(request, exc) -> JSONResponse:
    """Paths and methods the SDK's routes do not serve: problem+json, as everywhere."""
    status = exc.status_code
    detail = (
        f"There is no A2A operation at {request.url.path}."
        if status == 404
        else f"{request.method} is not allowed on {request.url.path}."
    )
    slug = "not-found" if status == 404 else "method-not-allowed"
    return JSONResponse(
        problem_body(status, slug, detail), status_code=status, media_type=PROBLEM_CONTENT_TYPE
    )


@csrf_exempt
def protocol_view(request: HttpRequest, path: str = "") -> HttpResponse:
    """POST /a2a/jsonrpc, and /a2a/rest/...: the A2A protocol, answered by the SDK."""
    refused = request_refusal(request, post_to=None if path else "/a2a/jsonrpc")
    if refused is not None:
        return refused
    problem = json_body_problem(request)
    if problem is not None:
        return _unreadable(problem, rest=bool(path))
    refused = list_query_problem(request, path)
    if refused is not None:
        return refused
    scope = asgi_scope(request)
    scope["state"][BODY] = request.body
    return _whole_numbers_on_the_wire(asgi_response(protocol_app(), request, scope))


# A JSON number written as a whole double ("status":400.0): protobuf's Struct, which A2A
# data parts are, holds every number as a double, and the SDK writes it so.
WHOLE_DOUBLE = re.compile(rb"[:\[,]-?\d+\.0(?=[,}\]])")


def _whole_numbers_on_the_wire(response: HttpResponse) -> HttpResponse:
    """The answer with its whole numbers written as integers, so that a problem in a data
    part is the HTTP API's document byte for byte (``"status": 400``, not ``400.0``); an
    answer without one (most) is passed on untouched."""
    body = response.content
    if not WHOLE_DOUBLE.search(body) or "json" not in response.get("Content-Type", ""):
        return response
    value = whole_numbers(json.loads(body))
    response.content = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return response


def _unreadable(problem: str, *, rest: bool) -> JsonResponse:
    """A body the SDK would read with laxer rules, refused as the binding refuses bad JSON."""
    if rest:
        payload = build_rest_error_payload(ParseError(f"Failed to load JSON: {problem}."))
        return JsonResponse(payload, status=payload["error"]["code"])
    return JsonResponse(
        build_error_response(None, JSONParseError(message=f"Parse error: {problem}"))
    )
