"""The queue relay when things go wrong, on the local RabbitMQ: a missing queue or an
unreachable broker is a clear, retryable error and makes no task; replies the relay cannot
use go to the dead-letter queue with their reason, and the consumer goes on."""

import json
import time
import uuid
from datetime import timedelta

import httpx
import kombu
import pytest
from django.utils import timezone

from protocols.a2a.models import RelayTask
from protocols.a2a.relay.store import relay_tasks_expire
from tests.protocols.a2a.relay.test_queue_relay import INVOICE, bearer


def jsonrpc_send(url: str, text: str, **headers) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "role": "ROLE_USER",
                "messageId": str(uuid.uuid4()),
                "parts": [{"text": text}],
            }
        },
    }
    return httpx.post(url, json=body, headers={"A2A-Version": "1.0", **headers}, timeout=30)


def rest_send(url: str, text: str, **headers) -> httpx.Response:
    body = {
        "message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}
    }
    return httpx.post(
        f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **headers}, timeout=30
    )


@pytest.mark.django_db(transaction=True)
def test_a_missing_queue_is_a_retryable_error_and_makes_no_task(relay, queue_agent, alice):
    """The agent's queue was never declared (or was deleted): nothing is sent nowhere."""
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"
    key = {"Authorization": bearer(alice)}

    rpc = jsonrpc_send(url, INVOICE, **key)
    rest = rest_send(url, INVOICE, **key)

    error = rpc.json()["error"]
    assert error["data"] == {"retryAfter": 30}
    assert queue_agent["queue"] in error["message"] and "does not exist" in error["message"]
    assert rpc.headers["Retry-After"] == "30"
    assert rest.status_code == 503
    assert rest.headers["Content-Type"] == "application/problem+json"
    assert rest.headers["Retry-After"] == "30"
    assert rest.json()["type"].endswith("/queue-unavailable")
    assert RelayTask.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_queue_deleted_while_in_use_fails_new_messages_only(relay, queue_agent, alice):
    queue_agent["start"]()
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"
    key = {"Authorization": bearer(alice)}
    first = jsonrpc_send(url, INVOICE, **key).json()["result"]["task"]
    queue_agent["pause"]()
    with kombu.Connection(relay_broker_url()) as conn:
        conn.channel().queue_delete(queue=queue_agent["queue"])

    refused = jsonrpc_send(url, INVOICE, **key).json()

    assert first["status"]["state"] == "TASK_STATE_COMPLETED"
    assert refused["error"]["data"] == {"retryAfter": 30}
    assert list(RelayTask.objects.values_list("id", "state")) == [
        (first["id"], "TASK_STATE_COMPLETED")
    ]


def relay_broker_url() -> str:
    from django.conf import settings

    return settings.QUEUE_RELAY_BROKER_URL


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_broker_is_a_retryable_error_that_names_no_address(
    relay, queue_agent, alice, settings, caplog
):
    settings.QUEUE_RELAY_BROKER_URL = "amqp://relayuser:s3cret-pw@127.0.0.1:1//"
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"

    rpc = jsonrpc_send(url, INVOICE, Authorization=bearer(alice))
    rest = rest_send(url, INVOICE, Authorization=bearer(alice))

    assert rpc.json()["error"]["data"] == {"retryAfter": 30}
    assert rest.status_code == 503 and rest.headers["Retry-After"] == "30"
    for text in (rpc.text, rest.text, caplog.text):
        assert "s3cret-pw" not in text and "relayuser" not in text and ":1/" not in text
    assert RelayTask.objects.count() == 0


def reply_put(body: bytes, correlation_id: str | None, secret: str | None = None) -> None:
    """A reply on the reply queue; with ``secret`` the task's (as its agent has it) unless
    another is given ("" for none)."""
    from django.conf import settings

    properties = {"correlation_id": correlation_id} if correlation_id else {}
    if secret is None:
        task = RelayTask.objects.filter(pk=correlation_id).first() if correlation_id else None
        secret = task.reply_secret if task else ""
    headers = {"x-relay-secret": secret} if secret else {}
    with kombu.Connection(settings.QUEUE_RELAY_BROKER_URL) as conn:
        conn.default_channel.basic_publish(
            conn.default_channel.prepare_message(body, properties=properties, headers=headers),
            exchange="",
            routing_key=settings.QUEUE_RELAY_REPLY_QUEUE,
        )


def dead_letters(count: int) -> list[tuple[str, bytes]]:
    from django.conf import settings

    found = []
    with kombu.Connection(settings.QUEUE_RELAY_BROKER_URL) as conn:
        channel = conn.default_channel
        for _ in range(200):
            message = channel.basic_get(settings.QUEUE_RELAY_DEAD_LETTER_QUEUE, no_ack=True)
            if message is not None:
                found.append((message.headers["x-relay-reason"], message.body))
                if len(found) == count:
                    break
            else:
                time.sleep(0.05)
    return found


@pytest.mark.django_db(transaction=True)
def test_replies_the_relay_cannot_use_are_dead_lettered_with_their_reason(
    relay, queue_agent, alice
):
    queue_agent["start"]()
    queue_agent["pause"]()  # the queue exists; the agent does not answer
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"
    task = rest_send(url, "hold", Authorization=bearer(alice)).json()
    task = task.get("task", task)
    working = {"taskId": task["id"], "contextId": task["contextId"]}
    working["status"] = {"state": "TASK_STATE_WORKING"}

    reply_put(b"not json", task["id"])
    reply_put(json.dumps({"jsonrpc": "2.0", "id": "x", "result": working}).encode(), "nobody")
    reply_put(json.dumps({"jsonrpc": "2.0", "result": {"status": "nonsense"}}).encode(), task["id"])
    reply_put(json.dumps({"jsonrpc": "2.0", "result": working}).encode(), None)
    reply_put(json.dumps({"jsonrpc": "2.0", "error": {"code": "x"}}).encode(), task["id"])
    reply_put(
        json.dumps({"jsonrpc": "2.0", "result": {"statusUpdate": working}}).encode(), task["id"]
    )

    reasons = [reason.split(":")[0] for reason, _ in dead_letters(5)]
    assert reasons == [
        "not-json",
        "unknown-task",
        "invalid-result",
        "no-correlation-id",
        "invalid-error",
    ]
    for _ in range(100):  # the consumer went on: the valid reply is applied
        if RelayTask.objects.get(pk=task["id"]).state == "TASK_STATE_WORKING":
            break
        time.sleep(0.05)
    assert RelayTask.objects.get(pk=task["id"]).state == "TASK_STATE_WORKING"


@pytest.mark.django_db(transaction=True)
def test_an_agents_error_reply_fails_the_task_and_a_finished_task_takes_no_more_changes(
    relay, queue_agent, alice
):
    queue_agent["start"]()
    queue_agent["pause"]()
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"
    task = jsonrpc_send(url, "x", Authorization=bearer(alice)).json()["result"]["task"]
    error = {"jsonrpc": "2.0", "id": task["id"], "error": {"code": -32603, "message": "boom"}}
    late = {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"]}}
    late["statusUpdate"]["status"] = {"state": "TASK_STATE_COMPLETED"}

    reply_put(json.dumps(error).encode(), task["id"])
    reply_put(json.dumps({"jsonrpc": "2.0", "result": late}).encode(), task["id"])

    assert [reason for reason, _ in dead_letters(1)] == ["task-final"]
    stored = RelayTask.objects.get(pk=task["id"])
    assert stored.state == "TASK_STATE_FAILED"
    assert stored.body["metadata"]["relayError"] == {"code": -32603, "message": "boom"}


@pytest.mark.django_db
def test_relayed_tasks_expire_after_the_retention(settings, native_payload, alice):
    agent = alice.post(
        "/agents",
        native_payload(
            endpoints=[{"name": "q", "transport": "Amqp", "protocol": "A2A", "address": "q"}]
        ),
        format="json",
    ).json()
    endpoint = agent["endpoints"][0]["id"]
    for name in ("old", "new"):
        RelayTask.objects.create(
            id=name, endpoint_id=endpoint, context_id="c", state="TASK_STATE_COMPLETED", body={}
        )
    RelayTask.objects.filter(pk="old").update(updated_at=timezone.now() - timedelta(days=8))

    assert relay_tasks_expire() == 1
    assert list(RelayTask.objects.values_list("id", flat=True)) == ["new"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["", "/message:send"])
def test_a_message_to_no_relayed_queue_is_a_404_problem(client, alice, native_payload, path):
    http = native_payload(
        endpoints=[
            {
                "name": "h",
                "transport": "Http",
                "protocol": "A2A",
                "address": "https://a.example/a2a",
            }
        ]
    )
    bus = native_payload(
        name="Bus",
        endpoints=[
            {"name": "b", "transport": "AzureServiceBus", "protocol": "A2A", "address": "jobs"}
        ],
    )
    ids = [
        alice.post("/agents", p, format="json").json()["endpoints"][0]["id"] for p in (http, bus)
    ]

    for endpoint in ["0", str(uuid.uuid4()), *ids]:
        response = client.post(f"/a2a/queue/{endpoint}{path}", {}, content_type="application/json")
        assert response.status_code == 404, response.content
        assert response["Content-Type"] == "application/problem+json"
    assert "not relayed" in response.json()["detail"]  # the Azure Service Bus endpoint
