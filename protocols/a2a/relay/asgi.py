"""The queue relay in the async server (``registry.events.asgi``, uvicorn; registered as the
ASGI route ``/a2a/queue/`` by ``protocols.a2a.extensions``): the same answers as the web
process's views (``protocols.a2a.relay.service``), but a call waiting for its agent's reply
waits in the event loop, holding no worker: up to ``QUEUE_RELAY_ASYNC_WAITS`` in all and
``QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT`` per client address (``protocols.a2a.relay.waits``).
Deployments route ``/a2a/queue/`` here (docs/guides/relay-waiting.md).

The checks that read the database (the read limit, the endpoint) run on the server's
database thread, as the SDK's calls do; the SDK's application is run whole
(``registry.fastpath.bridge.asgi_call``) and its answer sent once it is complete.
"""

import io
import json
import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse

from protocols.a2a.relay.answers import relay_outcome, relay_problem
from protocols.a2a.relay.service import (
    QueueRelayHandler,
    endpoint_details,
    relay_app,
    relay_endpoint,
    relay_prelude,
)
from protocols.a2a.relay.waits import async_waits
from registry.access.counters import client_ip
from registry.access.throttles import read_limited
from registry.fastpath.bridge import asgi_call, response_of
from registry.http.problems import ProblemError, problem_response

logger = logging.getLogger(__name__)

PREFIX = "/a2a/queue/"
# Many waits share the database thread here: each looks at its task at most this often.
POLL_MAX_SECONDS = 0.25


async def _body(receive) -> bytes | None:
    """The request's body; None past DATA_UPLOAD_MAX_MEMORY_SIZE (the rest is not read)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _prepare(scope: dict, body: bytes) -> tuple[HttpResponse | None, object, str]:
    """On the database thread: the answer refusing the request (or a GET's answer), else
    None with the endpoint and the client's address."""
    request = ASGIRequest(scope, io.BytesIO(body))
    endpoint_id, _, path = scope["path"][len(PREFIX) :].partition("/")
    try:
        if scope["method"] in ("GET", "HEAD") and not path:
            limited = read_limited(request)
            if limited is not None:
                return limited, None, ""
            details = endpoint_details(relay_endpoint(endpoint_id, request))
            return HttpResponse(json.dumps(details), content_type="application/json"), None, ""
        endpoint = relay_prelude(request, endpoint_id, path)
    except ProblemError as exc:
        return relay_problem(exc), None, ""
    if isinstance(endpoint, HttpResponse):
        return endpoint, None, ""
    return None, endpoint, client_ip(request)


async def _send(send, response: HttpResponse) -> None:
    headers = [(b"content-length", str(len(response.content)).encode())]
    headers += [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.items()
        if name.lower() != "content-length"
    ]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})


async def application(scope, receive, send) -> None:
    body = await _body(receive)
    if body is None:
        await _send(
            send, problem_response(413, "payload-too-large", "The request body is too large.")
        )
        return
    try:
        answer, endpoint, client = await sync_to_async(_prepare)(scope, body)
        if answer is None:
            endpoint_id, _, path = scope["path"][len(PREFIX) :].partition("/")
            handler = QueueRelayHandler(
                endpoint, waits=async_waits, client=client, poll_max=POLL_MAX_SECONDS
            )
            app = relay_app(handler, f"{PREFIX}{endpoint_id}")
            response = response_of(*await asgi_call(app, {**scope, "state": {}}, body))
            answer = relay_outcome(handler, response, rest=bool(path))
    except Exception:  # a bug: its answer is a problem, never the connection dropped
        logger.exception("The queue relay failed to answer %s %s", scope["method"], scope["path"])
        answer = problem_response(500, "server-error", "The relay failed to answer.")
    await _send(send, answer)
