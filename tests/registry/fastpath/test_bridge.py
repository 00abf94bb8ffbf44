"""registry.fastpath.bridge: an ASGI application answered from a Django view."""

import json

import anyio
from django.test import RequestFactory

from registry.fastpath import bridge


async def hello(scope, receive, send):
    request = await receive()
    await send(
        {
            "type": "http.response.start",
            "status": 201,
            "headers": [(b"x-path", scope["path"].encode())],
        }
    )
    await send({"type": "http.response.body", "body": b"got " + request["body"], "more_body": True})
    await send({"type": "http.response.body", "body": b"!"})


async def endless(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
    await anyio.sleep_forever()


def test_the_application_gets_the_request_and_its_answer_is_returned_whole():
    request = RequestFactory().post("/x/y?a=1", data=b"body", content_type="text/plain")
    response = bridge.asgi_response(hello, request)
    assert response.status_code == 201
    assert response.content == b"got body!"
    assert response["x-path"] == "/x/y"


def test_an_answer_that_never_ends_is_a_504_problem(monkeypatch):
    monkeypatch.setattr(bridge, "ANSWER_SECONDS", 0.1)
    response = bridge.asgi_response(endless, RequestFactory().get("/events"))
    assert response.status_code == 504
    assert json.loads(response.content)["type"] == "/problems/timeout"
