"""The registry as an A2A agent, driven by a2a-sdk's own client against a live server over
each of its two bindings: discovery by text and by data, registration with and without a key,
tasks kept per key, continued and expired, and the write limit registrations share."""

import asyncio
import json
import uuid
from datetime import timedelta

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts, new_data_part, new_text_part
from a2a.types.a2a_pb2 import (
    Message,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from django.utils import timezone

from registry.access.models import ApiKey
from registry.agents.models import Agent
from tests.protocols.a2a.face.conftest import BINDINGS, answer, converse, reply, rpc


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_discovery_by_text_ignores_the_words_that_only_ask(registered, registry_url, binding):
    parts = [new_text_part("Find agents that can translate")]
    message, _, _ = converse(registry_url, binding, parts)

    data, text = reply(message)
    assert message.role == Role.ROLE_AGENT
    assert [a["id"] for a in data["agents"]] == [registered["lingua"]]
    (found,) = data["agents"]
    assert found["name"] == "Lingua"
    assert found["cardUrl"] == f"{registry_url}/a2a/agents/{registered['lingua']}"
    assert found["skills"][0]["id"] == "translate"
    assert "Found 1 agent" in text and "Lingua" in text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_discovery_is_answered_by_a_message_and_stores_no_task(
    registered, registry_url, make_key, binding
):
    from protocols.a2a.models import AgentTask

    key = make_key("dora")
    message, _, listed = converse(registry_url, binding, [new_text_part("weather")], key=key)

    assert message.message_id and message.context_id and not message.task_id
    assert [a["id"] for a in reply(message)[0]["agents"]] == [registered["weather"]]
    assert list(listed.tasks) == []
    assert not AgentTask.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_discovery_by_data_uses_the_discovery_filters(registered, registry_url, binding):
    parts = [new_data_part({"tag": "weather", "protocol": "A2A", "limit": 10})]
    message, _, _ = converse(registry_url, binding, parts)

    data, _ = reply(message)
    assert [a["id"] for a in data["agents"]] == [registered["weather"]]
    assert data["agents"][0]["skills"][0]["tags"] == ["weather", "forecast"]


@pytest.mark.django_db(transaction=True)
def test_discovery_pages_on_with_the_next_cursor(registered, registry_url):
    first, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"limit": 1})])
    data, text = reply(first)
    assert len(data["agents"]) == 1 and data["nextCursor"]
    assert "more on the next page" in text

    parts = [new_data_part({"limit": 1, "cursor": data["nextCursor"]})]
    second, _, _ = converse(registry_url, "JSONRPC", parts)
    following, _ = reply(second)
    seen = [data["agents"][0]["id"], following["agents"][0]["id"]]
    assert sorted(seen) == sorted([registered["weather"], registered["lingua"]])


@pytest.mark.django_db(transaction=True)
def test_discovery_that_finds_nothing_says_so(registered, registry_url):
    message, _, _ = converse(registry_url, "JSONRPC", [new_text_part("quantum chess tutors")])

    data, text = reply(message)
    assert data["agents"] == []
    assert text == "No agents found for “quantum chess tutors”."


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_discovery_with_a_bad_filter_is_invalid_params_with_the_problem(
    registered, registry_url, binding
):
    with pytest.raises(InvalidParamsError) as refused:
        converse(registry_url, binding, [new_data_part({"protocol": "SMTP"})])

    problem = refused.value.data["problem"]
    assert problem["status"] == 400 and problem["type"] == "/problems/validation-error"
    assert [e["path"] for e in problem["errors"]] == ["protocol"]
    from protocols.a2a.models import AgentTask

    assert not AgentTask.objects.exists()  # no task is made for a refused search


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_registration_with_a_key_registers_as_post_a2a_agents_does(
    make_key, make_card, registry_url, binding
):
    key = make_key("carol")
    card = make_card(name="Carol's Agent")
    task, fetched, listed = converse(
        registry_url, binding, [new_data_part({"card": card})], key=key
    )

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    data, text = answer(task)
    agent = Agent.objects.get(pk=data["agentId"])
    assert agent.owner == "carol" and agent.name == "Carol's Agent"
    assert data["cardUrl"] == f"{registry_url}/a2a/agents/{agent.id}"
    assert data["created"] is True
    assert str(agent.id) in text
    with httpx.Client() as http:
        assert http.get(data["cardUrl"]).json() == card  # served as sent
    assert fetched.status.state == TaskState.TASK_STATE_COMPLETED
    assert [t.id for t in listed.tasks] == [task.id]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_registration_without_a_key_stores_nothing_and_asks_for_authentication(
    make_card, registry_url, binding
):
    task, fetched, _ = converse(registry_url, binding, [new_data_part({"card": make_card()})])

    assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    data, text = answer(task)
    assert "needs an API key" in text
    assert data["problem"]["status"] == 401
    assert not Agent.objects.exists()
    assert fetched.status.state == TaskState.TASK_STATE_AUTH_REQUIRED


@pytest.mark.django_db(transaction=True)
def test_registration_with_a_wrong_key_stores_nothing(make_card, registry_url):
    parts = [new_data_part({"card": make_card()})]
    task, _, _ = converse(registry_url, "JSONRPC", parts, key="rk_not-a-key")

    assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert "not valid" in answer(task)[1]
    assert not Agent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_registration_with_an_expired_key_stores_nothing_and_says_it_expired(
    make_key, make_card, registry_url
):
    key = make_key("alice")
    ApiKey.objects.filter(owner="alice").update(expires_at=timezone.now() - timedelta(minutes=1))
    parts = [new_data_part({"card": make_card()})]

    task, _, _ = converse(registry_url, "JSONRPC", parts, key=key)

    assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert "expired" in answer(task)[1]
    assert not Agent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_invalid_card_comes_back_with_every_problem_and_its_path(
    make_key, make_card, registry_url
):
    card = make_card()
    card["skills"][0]["tags"] = []
    card["supportedInterfaces"][0]["url"] = "http://weather.example.com/a2a"
    task, _, _ = converse(
        registry_url, "HTTP+JSON", [new_data_part({"card": card})], key=make_key()
    )

    assert task.status.state == TaskState.TASK_STATE_REJECTED
    data, text = answer(task)
    assert {e["path"] for e in data["problem"]["errors"]} == {
        "skills[0].tags",
        "supportedInterfaces[0].url",
    }
    assert text.startswith("The agent card is invalid")
    assert not Agent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_another_key_cannot_read_a_task(make_key, make_card, registry_url):
    parts = [new_data_part({"card": make_card()})]
    task, _, _ = converse(registry_url, "JSONRPC", parts, key=make_key())
    assert task.status.state == TaskState.TASK_STATE_COMPLETED

    async def read(key):
        headers = {"Authorization": f"Bearer {key}", "A2A-Version": "1.0"}
        async with httpx.AsyncClient(headers=headers) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task.id}}
            return (await http.post(f"{registry_url}/a2a/jsonrpc", json=body)).json()

    answered = asyncio.run(read(make_key("mallory")))
    assert answered["error"]["code"] == -32001  # TaskNotFoundError


@pytest.mark.django_db(transaction=True)
def test_old_tasks_are_removed_by_the_expiry_job(registry_url, settings, make_card):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    from protocols.a2a.models import AgentTask

    parts = [new_data_part({"card": make_card()})]  # without a key: a task asking for one
    old, _, _ = converse(registry_url, "JSONRPC", parts)
    new, _, _ = converse(registry_url, "JSONRPC", parts)
    settings.A2A_TASK_RETENTION_SECONDS = 3600
    AgentTask.objects.filter(pk=old.id).update(updated_at=timezone.now() - timedelta(hours=2))

    call_command("agent_tasks_expire")

    assert list(AgentTask.objects.values_list("id", flat=True)) == [new.id]


@pytest.mark.django_db(transaction=True)
def test_registrations_share_the_keys_write_limit(make_key, make_card, registry_url, settings):
    settings.RATE_LIMIT_WRITE = "1/day"
    key = make_key()
    first, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"card": make_card()})], key=key)
    card = make_card(name="Second")
    second, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"card": card})], key=key)

    assert first.status.state == TaskState.TASK_STATE_COMPLETED
    assert second.status.state == TaskState.TASK_STATE_REJECTED
    assert answer(second)[0]["problem"]["status"] == 429
    assert Agent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_after_auth_required_the_same_task_goes_on_with_a_key(
    make_key, make_card, registry_url, binding
):
    parts = [new_data_part({"card": make_card()})]
    asked, _, _ = converse(registry_url, binding, parts)
    assert asked.status.state == TaskState.TASK_STATE_AUTH_REQUIRED

    async def follow_up(key):
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=[binding], streaming=False
            )
            client = await ClientFactory(config).create_from_url(registry_url)
            message = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                task_id=asked.id,
                context_id=asked.context_id,
                parts=parts,
            )
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            return events[-1].task

    done = asyncio.run(follow_up(make_key("erin")))
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    agent_id = get_data_parts(done.artifacts[-1].parts)[0]["agentId"]
    assert Agent.objects.get(pk=agent_id).owner == "erin"


@pytest.mark.django_db(transaction=True)
def test_the_admin_lists_the_tasks(registry_url, client, django_user_model, make_card):
    task, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"card": make_card()})])
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-123456789"))

    listing = client.get("/admin/a2a/agenttask/")
    assert listing.status_code == 200 and task.id in listing.content.decode()
    assert client.get(f"/admin/a2a/agenttask/{task.id}/change/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_question_to_a_task_is_answered_in_that_task(registered, make_card, registry_url):
    asked, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"card": make_card()})])
    assert asked.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    message = {
        "role": "ROLE_USER",
        "messageId": "m2",
        "taskId": asked.id,
        "contextId": asked.context_id,
        "parts": [{"text": "find agents that can translate"}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}

    task = rpc(registry_url, json.dumps(body)).json()["result"]["task"]

    assert task["id"] == asked.id
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    found = task["artifacts"][-1]["parts"][0]["data"]["agents"]
    assert [a["id"] for a in found] == [registered["lingua"]]


@pytest.mark.django_db(transaction=True)
def test_discovery_by_data_takes_the_search_mode(registered, registry_url):
    parts = [new_data_part({"q": "will it rain tomorrow", "mode": "semantic"})]
    message, _, _ = converse(registry_url, "JSONRPC", parts)
    data, _ = reply(message)
    assert data["agents"][0]["id"] == registered["weather"]
    parts = [new_data_part({"q": "will it rain tomorrow", "mode": "keyword"})]
    data, _ = reply(converse(registry_url, "JSONRPC", parts)[0])
    assert data["agents"] == []

    with pytest.raises(InvalidParamsError) as refused:  # as every bad search: invalid params
        converse(registry_url, "JSONRPC", [new_data_part({"q": "x", "mode": "vibes"})])
    assert [e["path"] for e in refused.value.data["problem"]["errors"]] == ["mode"]


@pytest.mark.django_db(transaction=True)
def test_discovery_by_data_takes_min_trust_and_the_trust_order(registered, registry_url, settings):
    from django.db import transaction

    from registry.signals import agents_written_send

    settings.TRUST_WEIGHTS = {"age": 1}  # the agents' age alone: 100 or 0
    with transaction.atomic():
        Agent.objects.filter(pk=registered["lingua"]).update(
            created_at=timezone.now() - timedelta(days=400)
        )
        agents_written_send(registered.values())
    ordered, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"sort": "trust"})])
    data, _ = reply(ordered)
    assert [(a["id"], a["trustScore"]) for a in data["agents"]] == [
        (registered["lingua"], 100),
        (registered["weather"], 0),
    ]
    kept, _, _ = converse(registry_url, "JSONRPC", [new_data_part({"minTrust": 50})])
    assert [a["id"] for a in reply(kept)[0]["agents"]] == [registered["lingua"]]
