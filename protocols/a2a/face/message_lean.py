"""A discovery question (a JSON-RPC ``SendMessage`` to ``POST /a2a/jsonrpc``) answered on the
lean lane (registry.fastpath.lean), without the bridge to a2a-sdk's ASGI server, its request
handler, event queue and task machinery: nothing of those changes a discovery answer, which
is a message and stores no task.

The request is read with the SDK's own parsing (``ParseDict`` into ``SendMessageRequest``,
its required-field check) and the answer built with its types and serialization
(``protocols.a2a.face.agent.discovery_reply``, ``MessageToDict``, ``JSONRPC20Response``), the whole
numbers written as integers as ``protocols.a2a.face.agent`` writes them: the same JSON as the SDK's
answer (its members in the answer's order, not a Struct's), but for the reply's new ids
(``tests/protocols/a2a/face/test_message_lean.py`` compares). Only the ordinary case is taken;
anything else goes on to ``protocol_view``, with its body: another method or shape (a configuration
that asks for something, a task named, a registration), an A2A version other than 1.x, a
body the SDK or the registry would refuse, credentials, a client over its read limit, and
any answer but a completed discovery (an error, a refusal, an outage).
"""

import json
import uuid

from a2a.types.a2a_pb2 import Role, SendMessageRequest, SendMessageResponse
from a2a.utils.proto_utils import validate_proto_required_fields
from django.conf import settings
from google.protobuf.json_format import MessageToDict, ParseDict
from jsonrpc.jsonrpc2 import JSONRPC20Response

from protocols.a2a.face import skills
from protocols.a2a.face.agent import (
    WHOLE_DOUBLE,
    discovery_answer,
    discovery_reply,
    message_skill,
    whole_numbers,
)
from registry.access.throttles import READ_COUNTED, read_wait
from registry.fastpath.lean import LeanAnswer, json_body
from registry.http.jsonutil import JSONInputError, strict_loads

# What the view's answer carries besides the security headers: the SDK's JSONResponse's,
# spelt as the bridge passes it on (registry.fastpath.bridge).
MESSAGE_HEADERS = (("content-type", "application/json"),)
# A discovery question is small; a larger body is the view's to refuse or answer.
MAX_BODY = 16 * 1024
_REQUEST_KEYS = {"jsonrpc", "id", "method", "params"}
_PARAMS_KEYS = {"message", "configuration"}
_VERSIONS = {"1.0", "1", "1.0.0"}  # the A2A-Version values the SDK's 1.0 handler takes


def message_lean(rest: str, environ) -> LeanAnswer | None:
    if environ.get("HTTP_A2A_VERSION") not in _VERSIONS:
        return None
    raw = json_body(environ, MAX_BODY)
    if raw is None:
        return None
    request = _discovery_request(raw)
    if request is None:
        return None
    request_id, message, data = request
    # Counted here, once: the view reads this count (a client over its limit gets its 429).
    environ[READ_COUNTED] = wait = read_wait(environ)
    if wait is not None:
        return None
    answer = discovery_answer(message, data)
    if answer.state != "completed":  # a refusal or an outage: the SDK's error answers it
        return None
    # The reply as the SDK writes it, but for the found agents: a data part's Struct
    # holds the same JSON (its numbers as doubles: whole ones are written as integers
    # below, as the view writes them), and filling it and reading it back took half the
    # message's time. (Its members come in the answer's order, not the Struct's.)
    empty = skills.Answer(answer.state, answer.text)
    reply = discovery_reply(empty, message.context_id or str(uuid.uuid4()))
    result = MessageToDict(SendMessageResponse(message=reply))
    result["message"]["parts"][1]["data"] = answer.data
    payload = JSONRPC20Response(result=result, _id=request_id).data
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    if WHOLE_DOUBLE.search(body):
        payload = whole_numbers(payload)
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return LeanAnswer(body, list(MESSAGE_HEADERS))


def _configured(configuration) -> bool:
    """Whether a message's configuration asks for anything a discovery reply does not
    already do: push notifications, a history length (the SDK checks it), an immediate
    return. (Output modes it lists change nothing: the reply is text and JSON.)"""
    return (
        configuration.HasField("task_push_notification_config")
        or configuration.HasField("history_length")
        or configuration.return_immediately
    )


def _discovery_request(raw: bytes):
    """``(id, message, data part)`` of a SendMessage that asks a discovery question of the
    ordinary shape (a new message, a configuration that changes nothing), or None."""
    try:
        # The registry's reading of a protocol body (registry.fastpath.bridge): what it
        # refuses is the view's error to answer.
        body = strict_loads(raw, max_depth=settings.REGISTRY_MAX_JSON_DEPTH)
    except (JSONInputError, ValueError):
        return None
    if (
        not isinstance(body, dict)
        or body.keys() != _REQUEST_KEYS
        or body["jsonrpc"] != "2.0"
        or body["method"] != "SendMessage"
        or not isinstance(body["params"], dict)
        or not _PARAMS_KEYS.issuperset(body["params"])
    ):
        return None
    request_id = body["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    try:
        request = ParseDict(body["params"], SendMessageRequest(), ignore_unknown_fields=True)
        validate_proto_required_fields(request)
    except Exception:  # the SDK's invalid params (A2AError) or a value it cannot read
        return None
    if _configured(request.configuration):
        return None
    message = request.message
    if message.role != Role.ROLE_USER or message.task_id or message.reference_task_ids:
        return None
    skill, data = message_skill(message)
    if skill != skills.DISCOVERY:
        return None
    return request_id, message, data
