"""Relayed tasks made without credentials, on the local RabbitMQ: anyone may make them, so
they are bounded per client address and in all (counted, past a limit refused with nothing
stored or published), and the unanswered ones go sooner than the others."""

from datetime import timedelta

import pytest
from django.utils import timezone

from protocols.a2a.models import RelayTask
from protocols.a2a.relay.store import relay_tasks_expire
from tests.protocols.a2a.conftest import queue_take
from tests.protocols.a2a.relay.test_queue_relay import bearer
from tests.protocols.a2a.relay.test_relay_headers import send_at_once


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("rest", [False, True])
def test_a_client_makes_a_few_anonymous_tasks_an_hour(relay, idle_queue, alice, settings, rest):
    settings.QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT = 2
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"

    made = [send_at_once(url, rest=rest) for _ in range(2)]
    refused = send_at_once(url, rest=rest)
    keyed = send_at_once(url, rest=rest, Authorization=bearer(alice))

    assert all(r.status_code == 200 and "error" not in r.json() for r in made)
    assert int(refused.headers["Retry-After"]) >= 1
    if rest:
        assert refused.status_code == 429
        assert refused.json()["type"].endswith("/relay-anonymous-limit")
    else:
        error = refused.json()["error"]
        assert error["data"]["limit"] == "QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT"
        assert error["data"]["retryAfter"] >= 1
    assert keyed.status_code == 200 and "error" not in keyed.json()
    assert RelayTask.objects.filter(scope="").count() == 2
    assert len(queue_take(relay["broker"], idle_queue["queue"])) == 3


@pytest.mark.django_db(transaction=True)
def test_anonymous_tasks_open_at_once_are_bounded_in_all(relay, idle_queue, settings):
    settings.QUEUE_RELAY_ANONYMOUS_TASKS_MAX = 2
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"

    made = [send_at_once(url) for _ in range(2)]
    refused = send_at_once(url, rest=True)
    RelayTask.objects.filter(pk=made[0].json()["result"]["task"]["id"]).update(
        state="TASK_STATE_COMPLETED"
    )
    after_one_finished = send_at_once(url, rest=True)

    assert refused.status_code == 503
    assert refused.json()["type"].endswith("/relay-anonymous-limit")
    assert refused.headers["Retry-After"] == "30"
    assert after_one_finished.status_code == 200
    assert RelayTask.objects.filter(scope="").count() == 3
    assert len(queue_take(relay["broker"], idle_queue["queue"])) == 3


@pytest.mark.django_db
def test_unanswered_anonymous_tasks_expire_sooner(settings, native_payload, alice):
    settings.QUEUE_RELAY_ANONYMOUS_TASK_RETENTION_SECONDS = 3600
    payload = native_payload(
        endpoints=[{"name": "q", "transport": "Amqp", "protocol": "A2A", "address": "jobs.q"}]
    )
    endpoint = alice.post("/agents", payload, format="json").json()["endpoints"][0]["id"]
    rows = {
        "anonymous-submitted": ("", "TASK_STATE_SUBMITTED"),
        "anonymous-pending": ("", "pending"),
        "anonymous-working": ("", "TASK_STATE_WORKING"),
        "anonymous-completed": ("", "TASK_STATE_COMPLETED"),
        "keyed-submitted": ("k" * 64, "TASK_STATE_SUBMITTED"),
    }
    for task_id, (scope, state) in rows.items():
        RelayTask.objects.create(
            id=task_id, endpoint_id=endpoint, scope=scope, context_id="c", state=state, body={}
        )
    RelayTask.objects.update(updated_at=timezone.now() - timedelta(hours=2))

    assert relay_tasks_expire() == 2
    assert sorted(RelayTask.objects.values_list("id", flat=True)) == [
        "anonymous-completed",
        "anonymous-working",
        "keyed-submitted",
    ]
