"""Fixtures and helpers of the tests of the registry as an A2A agent: the live server's URL,
a2a-sdk's client made from the registry's well-known card (one message, the task read back,
the key's tasks listed), two registered agents, and raw JSON-RPC posts."""

import asyncio
import uuid

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
)

BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.fixture
def registry_url(live_server, settings) -> str:
    settings.REGISTRY_BASE_URL = live_server.url
    return live_server.url


def converse(base: str, binding: str, parts, *, key: str | None = None, metadata=None, sent=None):
    """Send one message; return the answer (a Message or a Task), the task read back by
    GetTask when it is one, and ListTasks's tasks for the key. ``sent`` (a list) gets the
    body of each request the client sent."""

    async def record(request: httpx.Request) -> None:
        if sent is not None and request.method == "POST":
            sent.append(request.content)

    async def run():
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        hooks = {"request": [record]}
        async with httpx.AsyncClient(headers=headers, timeout=30, event_hooks=hooks) as http:
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=[binding], streaming=False
            )
            client = await ClientFactory(config).create_from_url(base)
            message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)
            if metadata:
                message.metadata.update(metadata)
            events = [
                event async for event in client.send_message(SendMessageRequest(message=message))
            ]
            assert len(events) == 1
            (event,) = events
            answered = event.message if event.HasField("message") else event.task
            fetched = None
            if isinstance(answered, Task):
                fetched = await client.get_task(GetTaskRequest(id=answered.id))
            listed = await client.list_tasks(ListTasksRequest()) if key else None
            return answered, fetched, listed

    return asyncio.run(run())


def answer(task: Task) -> tuple[dict, str]:
    (artifact,) = task.artifacts
    (data,) = get_data_parts(artifact.parts)
    return data, " ".join(p.text for p in task.status.message.parts)


def reply(message: Message) -> tuple[dict, str]:
    """A message's answer: its data part and its text."""
    assert isinstance(message, Message), f"a task, not a message: {message}"
    (data,) = get_data_parts(message.parts)
    return data, " ".join(p.text for p in message.parts if p.text)


@pytest.fixture
def registered(alice, make_card, registry_url):
    weather = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()
    translator = make_card(
        name="Lingua",
        description="Translates documents between languages.",
        supportedInterfaces=[
            {
                "url": "https://lingua.example.com/a2a",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": "1.0",
            }
        ],
        skills=[
            {
                "id": "translate",
                "name": "Translate",
                "description": "Translate a text.",
                "tags": ["language", "translation"],
            }
        ],
    )
    lingua = alice.post("/a2a/agents", {"card": translator}, format="json").json()
    return {"weather": weather["id"], "lingua": lingua["id"]}


def rpc(registry_url: str, body: bytes | str, content_type="application/json") -> httpx.Response:
    with httpx.Client() as http:
        data = body if isinstance(body, bytes) else body.encode()
        return http.post(
            f"{registry_url}/a2a/jsonrpc",
            content=data,
            headers={"Content-Type": content_type, "A2A-Version": "1.0"},
        )
