"""Replies are bound to their requests, on the local RabbitMQ: each task has a random reply
secret, published with its requests, that a reply must echo; any other broker client that
knows a task's id cannot complete it (its reply is dead-lettered, without the secret)."""

import json
import time

import kombu
import pytest

from protocols.a2a.models import RelayTask
from tests.protocols.a2a.conftest import queue_take
from tests.protocols.a2a.relay.test_queue_relay import bearer
from tests.protocols.a2a.relay.test_queue_relay_failures import reply_put
from tests.protocols.a2a.relay.test_relay_headers import send_at_once


def dead_letters_with_headers(broker: str, queue: str, count: int) -> list[dict]:
    """The headers of the first ``count`` dead letters, waiting for the consumer (5 s at
    most: it dead-letters within milliseconds)."""
    found = []
    with kombu.Connection(broker) as conn:
        for _ in range(100):
            message = conn.default_channel.basic_get(queue, no_ack=True)
            if message is None:
                time.sleep(0.05)
                continue
            found.append(message.headers)
            if len(found) == count:
                break
    return found


@pytest.mark.django_db(transaction=True)
def test_only_a_reply_echoing_the_tasks_secret_changes_it(relay, idle_queue, alice, settings):
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"
    task = send_at_once(url, Authorization=bearer(alice)).json()["result"]["task"]
    (request,) = queue_take(relay["broker"], idle_queue["queue"])
    secret = request.headers["x-relay-secret"]
    done = {"statusUpdate": {"taskId": task["id"], "contextId": task["contextId"]}}
    done["statusUpdate"]["status"] = {"state": "TASK_STATE_COMPLETED"}
    body = json.dumps({"jsonrpc": "2.0", "id": task["id"], "result": done}).encode()

    reply_put(body, task["id"], secret="")
    reply_put(body, task["id"], secret="guessed-" + secret[8:])

    dead = dead_letters_with_headers(relay["broker"], settings.QUEUE_RELAY_DEAD_LETTER_QUEUE, 2)
    assert [h["x-relay-reason"] for h in dead] == ["wrong-reply-secret"] * 2
    assert all("x-relay-secret" not in h for h in dead)
    assert RelayTask.objects.get(pk=task["id"]).state == "TASK_STATE_SUBMITTED"
    assert len(secret) >= 32 and RelayTask.objects.get(pk=task["id"]).reply_secret == secret

    reply_put(body, task["id"], secret=secret)
    for _ in range(100):
        if RelayTask.objects.get(pk=task["id"]).state == "TASK_STATE_COMPLETED":
            break
        time.sleep(0.05)
    assert RelayTask.objects.get(pk=task["id"]).state == "TASK_STATE_COMPLETED"


@pytest.mark.django_db(transaction=True)
def test_each_task_has_its_own_secret_stored_with_it(relay, idle_queue, alice):
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"
    first, second = (
        send_at_once(url, Authorization=bearer(alice)).json()["result"]["task"] for _ in range(2)
    )
    secrets = [
        m.headers["x-relay-secret"] for m in queue_take(relay["broker"], idle_queue["queue"])
    ]

    assert len(set(secrets)) == 2
    assert secrets == [RelayTask.objects.get(pk=t["id"]).reply_secret for t in (first, second)]
