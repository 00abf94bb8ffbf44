"""Discovery questions on the lean lane (protocols.a2a.face.message_lean): a SendMessage answered as
a2a-sdk's server answers it (the same status, headers and JSON but for the reply's new ids),
every other request left to the SDK with its body intact, and a2a-sdk's own client served
by the lane as by the SDK."""

import asyncio
import json
import threading
import uuid
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts, new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest

from registry import extensions
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder
from tests.registry.fastpath.test_lean import post as post_to

pytestmark = pytest.mark.django_db

A2A = {"HTTP_A2A_VERSION": "1.0"}


def post(app, body, content_type="application/json", **meta) -> tuple[int, dict, bytes]:
    return post_to(app, "/a2a/jsonrpc", body, content_type, **meta)


def send(parts, *, request_id=1, **message) -> dict:
    message = {"role": "ROLE_USER", "messageId": "m-1", "parts": parts, **message}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "SendMessage",
        "params": {"message": message},
    }


def configured(request: dict, configuration: dict) -> dict:
    request["params"]["configuration"] = configuration
    return request


def without_new_ids(content: bytes, request: dict) -> dict:
    """The answer with the ids the server makes anew for each reply blanked: the message's id,
    and its context id unless the request named one."""
    answer = json.loads(content)
    reply = answer.get("result", {}).get("message")
    if reply is not None:
        uuid.UUID(reply.pop("messageId"))
        asked = request["params"]["message"].get("contextId")
        context = reply.pop("contextId")
        assert context == asked if asked else uuid.UUID(context)
    return answer


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


@pytest.fixture
def agents(alice, make_card) -> list[str]:
    ids = []
    for n in range(3):
        card = make_card(name=f"Weather {n}", description=f"Weather forecasts, kind {n}.")
        card["supportedInterfaces"] = [
            dict(card["supportedInterfaces"][0], url=f"https://w{n}.example.com/a2a")
        ]
        card["skills"][0]["tags"] = ["weather", f"kind-{n}"]
        response = alice.post("/a2a/agents", {"card": card}, format="json")
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    return ids


def test_the_route_is_registered_by_the_a2a_app():
    routes = {(route.method, route.prefix): route for route in extensions.lean_routes.read()}
    route = routes["POST", "/a2a/jsonrpc"]
    assert (route.exact, route.anonymous, route.read_limited) == (True, True, False)


DISCOVERY_QUESTIONS = [
    send([{"data": {"q": "weather"}}]),
    send([{"data": {"q": "weather", "mode": "keyword", "limit": 2}}], request_id="abc"),
    send([{"data": {"tag": "kind-1"}}], contextId="ctx-7"),
    send([{"data": {"q": "nothing-matches-this"}}]),
    send([{"data": {}}]),
    send([{"data": {"q": "weather", "limit": 1.0, "liveOnly": False}}]),
    send([{"text": "find agents that can forecast the weather"}]),
    send([{"text": "hello"}, {"data": {"q": "forecasts", "sort": "name"}}]),
    send([{"data": [1, 2]}]),
    send([{"url": "https://files.example/q.txt"}]),
    send([{"data": {"q": "weather"}}], metadata={"skill": "agent-discovery"}),
    configured(send([{"data": {"q": "weather"}}]), {}),
    configured(send([{"data": {"q": "weather"}}]), {"acceptedOutputModes": ["application/json"]}),
    configured(send([{"data": {"q": "weather"}}]), {"returnImmediately": False}),
]


@pytest.mark.parametrize("request_body", DISCOVERY_QUESTIONS)
def test_a_discovery_question_is_answered_on_the_lane_as_the_sdk_answers_it(
    lane, agents, request_body
):
    app, django = lane
    by_sdk = post(django, request_body, HTTP_X_REQUEST_ID="same-id", **A2A)
    assert django.paths == ["/a2a/jsonrpc"]
    on_lane = post(app, request_body, HTTP_X_REQUEST_ID="same-id", **A2A)
    assert django.paths == ["/a2a/jsonrpc"]  # not asked again: the lane answered
    assert on_lane[0] == by_sdk[0] == 200
    assert on_lane[1] == {**by_sdk[1], "Content-Length": str(len(on_lane[2]))}
    assert without_new_ids(on_lane[2], request_body) == without_new_ids(by_sdk[2], request_body)
    reply = json.loads(on_lane[2])["result"]["message"]
    assert reply["role"] == "ROLE_AGENT" and "agents" in reply["parts"][1]["data"]


def test_the_lane_finds_what_get_discover_agents_finds(lane, agents, anon):
    app, _ = lane
    listed = anon.get("/discover/agents", {"q": "weather", "mode": "keyword"}).json()["results"]
    status, _, content = post(app, send([{"data": {"q": "weather", "mode": "keyword"}}]), **A2A)
    data = json.loads(content)["result"]["message"]["parts"][1]["data"]
    assert status == 200 and [a["id"] for a in data["agents"]] == [a["id"] for a in listed]
    assert sorted(a["id"] for a in data["agents"]) == sorted(agents)


OTHER_REQUESTS = [
    # Bad JSON-RPC and bad params: the SDK's errors.
    ("{not json", {}),
    ('{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "SendMessage", "params": {}}', {}),
    ('{"jsonrpc": "1.0", "id": 1, "method": "SendMessage", "params": {}}', {}),
    ('{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}', {}),
    ('{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 5}}', {}),
    ('{"jsonrpc": "2.0", "id": true, "method": "SendMessage", "params": {}}', {}),
    ("[]", {}),
    (send([{"data": {"q": "weather"}}], messageId=""), {}),
    (send([]), {}),
    (send([{"data": {"q": {"nested": 1}}}]), {}),
    (send([{"data": {"limit": "many"}}]), {}),
    (send([{"data": {"q": "weather"}}], role="ROLE_AGENT"), {}),
    # Other methods and shapes: the SDK's answers.
    ({**send([{"data": {"q": "weather"}}]), "method": "SendStreamingMessage"}, {}),
    ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}}, {}),
    (send([{"data": {"q": "weather"}}], taskId="t-1"), {}),
    (send([{"data": {"card": "not a card"}}]), {}),
    (send([{"data": {"q": "weather"}}], metadata={"skill": "agent-registration"}), {}),
    (
        configured(send([{"data": {"q": "weather"}}]), {"historyLength": 1}),
        {},
    ),
    (configured(send([{"data": {"q": "weather"}}]), {"historyLength": -1}), {}),
    (configured(send([{"data": {"q": "weather"}}]), {"returnImmediately": True}), {}),
    (
        configured(
            send([{"data": {"q": "weather"}}]),
            {"taskPushNotificationConfig": {"url": "https://hooks.example.com/a2a"}},
        ),
        {},
    ),
    ({**send([{"data": {"q": "weather"}}]), "params": {"message": {}, "tenant": "t"}}, {}),
    # Another A2A version, or none (0.3 for the SDK), another media type, credentials.
    (send([{"data": {"q": "weather"}}]), {"HTTP_A2A_VERSION": "0.3"}),
    (send([{"data": {"q": "weather"}}]), {"HTTP_A2A_VERSION": None}),
    (send([{"data": {"q": "weather"}}]), {"content_type": "text/plain"}),
    (send([{"data": {"q": "weather"}}]), {"HTTP_AUTHORIZATION": "Bearer nope"}),
]


@pytest.mark.parametrize(("request_body", "meta"), OTHER_REQUESTS)
def test_other_requests_go_to_the_sdk_with_their_body(lane, agents, request_body, meta):
    app, django = lane
    meta = {**A2A, **meta}
    content_type = meta.pop("content_type", "application/json")
    meta = {name: value for name, value in meta.items() if value is not None}
    raw = request_body.encode() if isinstance(request_body, str) else json.dumps(request_body)
    by_sdk = post(Recorder(), raw, content_type, **meta)
    status, _, content = post(app, raw, content_type, **meta)
    assert django.paths == ["/a2a/jsonrpc"]  # the SDK's view answered
    assert status == by_sdk[0] < 500
    answer = json.loads(content)
    if "error" in answer:
        assert answer == json.loads(by_sdk[2])
    else:  # a task (its ids are new) or a streamed event
        assert answer.keys() == json.loads(by_sdk[2]).keys()


def test_a_client_over_its_read_limit_gets_the_views_429(lane, agents, settings):
    app, django = lane
    settings.RATE_LIMIT_READ = "1/minute"
    assert post(app, send([{"data": {"q": "weather"}}]), **A2A)[0] == 200
    status, headers, _ = post(app, send([{"data": {"q": "weather"}}]), **A2A)
    assert status == 429 and "Retry-After" in headers
    assert django.paths == ["/a2a/jsonrpc"]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "parts",
    [[new_data_part({"q": "weather"})], [new_text_part("agents that forecast the weather")]],
)
def test_the_sdks_client_is_answered_by_the_lane(agents, settings, parts):
    """a2a-sdk's client, over HTTP to the registry's WSGI application with its lean lane, gets
    a message listing the agents, and the SDK's server was not asked."""
    recorder = Recorder()
    server = make_server("127.0.0.1", 0, LeanApplication(recorder), WSGIServer, _QuietHandler)
    base = f"http://127.0.0.1:{server.server_port}"
    settings.REGISTRY_BASE_URL = base
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    async def ask():
        async with httpx.AsyncClient(timeout=30) as http:
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=["JSONRPC"], streaming=False
            )
            client = await ClientFactory(config).create_from_url(base)
            message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)
            return [e async for e in client.send_message(SendMessageRequest(message=message))]

    try:
        (event,) = asyncio.run(ask())
    finally:
        server.shutdown()
        server.server_close()
    assert event.HasField("message") and event.message.role == Role.ROLE_AGENT
    (data,) = get_data_parts(event.message.parts)
    assert sorted(agent["id"] for agent in data["agents"]) == sorted(agents)
    assert "/a2a/jsonrpc" not in recorder.paths
