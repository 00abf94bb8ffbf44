"""The relay's route in the stream server (``protocols.a2a.relay.asgi``, where a wait is a
coroutine of the event loop), on the local RabbitMQ: a client's calls wait up to
QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT at once; one more is refused at once with nothing
published while the others wait, and those complete when their agent replies."""

import asyncio
import json
import uuid

import kombu
import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from protocols.a2a.relay import asgi
from protocols.a2a.relay.waits import AsyncWaits
from registry.fastpath.bridge import asgi_call
from tests.protocols.a2a.relay.test_queue_relay_failures import reply_put


class ObservedWaits(AsyncWaits):
    """The server's waiting places, telling the test when a place is taken."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        super().__init__()
        self.loop, self.taken = loop, asyncio.Queue()

    def take(self, client: str):
        release = super().take(client)
        self.loop.call_soon_threadsafe(self.taken.put_nowait, client)
        return release


def send_scope(endpoint: str, client: str) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": f"{asgi.PREFIX}{endpoint}",
        "raw_path": f"{asgi.PREFIX}{endpoint}".encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
        ],
        "client": (client, 40000),
        "server": ("localhost", 80),
    }


def send_body() -> bytes:
    message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": "hi"}]}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    ).encode()


def requests_receive(broker: str, queue: str, count: int) -> list:
    """The next ``count`` requests published to ``queue``, as they arrive (blocking)."""
    got: list = []
    with kombu.Connection(broker) as conn:
        consumer = kombu.Consumer(
            conn,
            queues=[kombu.Queue(queue, no_declare=True)],
            callbacks=[lambda body, message: (got.append(message), message.ack())],
            accept=["json"],
        )
        with consumer:
            while len(got) < count:
                conn.drain_events(timeout=20)
    return got


@pytest.mark.django_db(transaction=True)
def test_the_async_route_refuses_a_clients_call_past_its_waits_while_the_others_wait(
    relay, idle_queue, settings, monkeypatch
):
    settings.QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT = 2
    settings.QUEUE_RELAY_WAIT_SECONDS = 60
    endpoint, client = idle_queue["endpoint"], "10.0.0.7"

    async def run():
        waits = ObservedWaits(asyncio.get_running_loop())
        monkeypatch.setattr(asgi, "async_waits", waits)
        waiting = [
            asyncio.create_task(
                asgi_call(asgi.application, send_scope(endpoint, client), send_body())
            )
            for _ in range(2)
        ]
        for _ in waiting:
            await waits.taken.get()
        refused = await asgi_call(asgi.application, send_scope(endpoint, client), send_body())
        other_client = asyncio.create_task(
            asgi_call(asgi.application, send_scope(endpoint, "10.0.0.8"), send_body())
        )
        await waits.taken.get()
        # The agent answers the three requests published (not the refused one's: none).
        requests = await asyncio.to_thread(
            requests_receive, relay["broker"], idle_queue["queue"], 3
        )
        for request in requests:
            task_id = request.properties["correlation_id"]
            done = {
                "jsonrpc": "2.0",
                "id": task_id,
                "result": {
                    "message": {
                        "role": "ROLE_AGENT",
                        "messageId": f"{task_id}-done",
                        "parts": [{"text": "ok"}],
                    }
                },
            }
            secret = request.headers["x-relay-secret"]
            await asyncio.to_thread(reply_put, json.dumps(done).encode(), task_id, secret)
        answered = await asyncio.gather(*waiting, other_client)
        await sync_to_async(connections.close_all)()  # the server's database thread's
        return refused, answered, waits

    refused, answered, waits = asyncio.run(run())

    status, headers, body = refused
    error = json.loads(body)["error"]
    assert status == 200 and error["data"]["limit"] == "QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT"
    assert (b"retry-after", b"60") in headers
    for status, _, body in answered:
        task = json.loads(body)["result"]["task"]
        assert status == 200 and task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert waits.total == 0 and not waits.clients  # every place given back
