"""The registry as an A2A agent, asked what it does not take: bad JSON-RPC, odd messages,
searches of the wrong shape, unknown tasks, bad HTTP+JSON requests, streaming, routes it
does not serve; each gets the protocol's error, with the problem's document where it has one."""

import asyncio
import json
import re
import uuid

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import new_data_part
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
)

from tests.protocols.a2a.face.conftest import BINDINGS, rpc


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", -32700),
        (b"\xff\xfe", -32700),
        ('{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}', -32601),
        ('{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 5}}', -32602),
        ('{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": []}}', -32602),
        ('{"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {}}', -32600),
        ("[]", -32600),
        ('"just a string"', -32600),
        ("[" * 5000 + "]" * 5000, -32700),
        ('{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "GetTask", "params": {}}', -32700),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {'
            '"role": "ROLE_USER", "messageId": "m", "parts": [{"data": {"limit": NaN}}]}}}',
            -32700,
        ),
    ],
)
def test_bad_json_rpc_gets_json_rpc_errors(registry_url, body, code):
    response = rpc(registry_url, body)
    assert response.status_code < 500
    assert response.json()["error"]["code"] == code


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("parts", "state"),
    [
        ([{"text": ""}], None),  # no words: the most recent agents, in a message
        ([{"data": [1, 2]}], None),  # not an object: no filters
        ([{"url": "https://files.example/q.txt"}], None),
        ([{"data": {"card": "not a card"}}], "TASK_STATE_AUTH_REQUIRED"),
    ],
)
def test_odd_messages_get_answers_not_errors(registry_url, parts, state):
    message = {"role": "ROLE_USER", "messageId": "m", "parts": parts}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answered = rpc(registry_url, json.dumps(body)).json()
    if state is None:
        assert answered["result"]["message"]["role"] == "ROLE_AGENT"
        assert "agents" in answered["result"]["message"]["parts"][1]["data"]
    else:
        assert answered["result"]["task"]["status"]["state"] == state


@pytest.mark.django_db(transaction=True)
def test_a_search_of_the_wrong_shape_is_a_json_rpc_invalid_params_error(registry_url):
    message = {"role": "ROLE_USER", "messageId": "m", "parts": [{"data": {"q": {"nested": 1}}}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    error = rpc(registry_url, json.dumps(body)).json()["error"]
    assert error["code"] == -32602
    (info,) = error["data"]  # a2a-sdk's google.rpc.ErrorInfo, the problem as its metadata
    assert info["metadata"]["problem"]["errors"] == [
        {"path": "q", "message": "must be a string, a number or a boolean"}
    ]


@pytest.mark.django_db(transaction=True)
def test_an_unknown_task_is_a_task_not_found_error(registry_url):
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "x", "method": "GetTask", "params": {"id": str(uuid.uuid4())}}
    )
    answered = rpc(registry_url, body).json()
    assert answered["id"] == "x" and answered["error"]["code"] == -32001


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/a2a/rest/message:send", b"{not json", 400),
        ("POST", "/a2a/rest/message:send", b'{"message": 5}', 400),
        ("GET", "/a2a/rest/tasks/7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63", None, 404),
        ("POST", "/a2a/rest/message:stream", b'{"message": {}}', 400),
        ("GET", "/a2a/rest/tasks/7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63:subscribe", None, 400),
        ("POST", "/a2a/rest/message:send", b"[" * 5000 + b"]" * 5000, 400),
        ("POST", "/a2a/rest/message:send", b'{"message": {"parts": [{"data": NaN}]}}', 400),
    ],
)
def test_bad_http_json_requests_get_client_errors(registry_url, method, path, body, status):
    with httpx.Client(headers={"A2A-Version": "1.0"}, timeout=30) as http:
        response = http.request(
            method,
            f"{registry_url}{path}",
            content=body,
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == status


@pytest.mark.django_db(transaction=True)
def test_streaming_is_declared_off_and_refused(registry_url):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": "x"}]}},
    }
    answered = rpc(registry_url, json.dumps(body)).json()
    assert answered["error"]["code"] == -32004  # UnsupportedOperationError


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("POST", "/a2a/rest/no-such-method", 404), ("GET", "/a2a/jsonrpc", 405)],
)
def test_what_the_a2a_routes_do_not_serve_is_a_problem(registry_url, method, path, status):
    with httpx.Client() as http:
        response = http.request(method, f"{registry_url}{path}")
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == status


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_problem_in_a_data_part_has_integer_numbers_on_the_wire(registry_url, binding):
    # a2a-sdk's own client, its answers read as they cross the wire: the problem document
    # is the HTTP API's, "status": 401, not the 401.0 of protobuf's doubles.
    bodies = []

    async def keep(response):
        await response.aread()
        bodies.append(response.content)

    async def run():
        async with httpx.AsyncClient(timeout=30, event_hooks={"response": [keep]}) as http:
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=[binding], streaming=False
            )
            client = await ClientFactory(config).create_from_url(registry_url)
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[new_data_part({"card": "not a card"})],  # no key: auth-required
            )
            [event] = [e async for e in client.send_message(SendMessageRequest(message=message))]
            await client.get_task(GetTaskRequest(id=event.task.id))

    asyncio.run(run())
    sent, fetched = bodies[-2:]
    for body in (sent, fetched):
        # (a Struct's members come in any order)
        assert re.search(rb'"status":401[,}]', body) and b"401.0" not in body
        found = json.loads(body)
        task = found.get("result", found)
        task = task.get("task", task)
        problem = task["artifacts"][0]["parts"][0]["data"]["problem"]
        assert problem["status"] == 401 and isinstance(problem["status"], int)


@pytest.mark.django_db(transaction=True)
def test_a_refused_searchs_problem_is_the_http_apis_document_over_raw_json_rpc(registry_url):
    message = {"role": "ROLE_USER", "messageId": "m", "parts": [{"data": {"limit": 1000}}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    error = rpc(registry_url, json.dumps(body)).json()["error"]
    assert error["code"] == -32602
    problem = error["data"][0]["metadata"]["problem"]
    with httpx.Client() as http:
        over_http = http.get(f"{registry_url}/discover/agents?limit=1000").json()
    # Each names its own request.
    assert problem.pop("requestId") != over_http.pop("requestId")
    assert problem == over_http
    assert isinstance(problem["status"], int)
