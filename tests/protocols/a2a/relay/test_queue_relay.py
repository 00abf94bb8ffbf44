"""The queue relay end to end, on the local RabbitMQ: a plain a2a-sdk client, made from the
agent's generated card, talks to an agent that consumes its AMQP queue
(``protocols.a2a.relay.queue_agent``, the demo's executor), through the registry and its relay
consumer."""

import asyncio
import uuid

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_data_parts, new_text_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import A2AError

from protocols.a2a.models import RelayTask

BINDINGS = ["JSONRPC", "HTTP+JSON"]
INVOICE = "2 x Widget @ 3.50\n1 x Gadget @ 10"


def ask(text: str, *, return_immediately: bool = False) -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()))
    message.parts.append(new_text_part(text))
    return SendMessageRequest(
        message=message,
        configuration=SendMessageConfiguration(return_immediately=return_immediately),
    )


def with_client(base: str, agent_id: str, binding: str, work, *, authorization: str = ""):
    """Run ``work(client)`` with an a2a-sdk client made from the agent's generated card."""

    async def run():
        headers = {"Authorization": authorization} if authorization else {}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            card = await A2ACardResolver(
                http, base, agent_card_path=f"/a2a/agents/{agent_id}"
            ).get_agent_card()
            config = ClientConfig(
                httpx_client=http, supported_protocol_bindings=[binding], streaming=False
            )
            return await work(ClientFactory(config).create(card))

    return asyncio.run(run())


async def send(client, request: SendMessageRequest):
    events = [event async for event in client.send_message(request)]
    assert len(events) == 1
    return events[0].task


def bearer(client) -> str:
    return client._credentials["HTTP_AUTHORIZATION"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_plain_client_gets_the_completed_task_through_the_registry(
    relay, queue_agent, alice, binding
):
    queue_agent["start"]()

    async def work(client):
        task = await send(client, ask(INVOICE))
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        listed = await client.list_tasks(ListTasksRequest(include_artifacts=True))
        return task, fetched, listed

    task, fetched, listed = with_client(
        relay["url"], queue_agent["agent"]["id"], binding, work, authorization=bearer(alice)
    )

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    (artifact,) = task.artifacts
    (data,) = get_data_parts(artifact.parts)
    assert data["total"] == 17.0
    assert [line["item"] for line in data["lines"]] == ["Widget", "Gadget"]
    assert task.status.message.parts[0].text == "Found 2 line items, total 17.00."
    assert fetched.id == task.id and fetched.status.state == TaskState.TASK_STATE_COMPLETED
    assert [t.id for t in listed.tasks] == [task.id]
    assert queue_agent["executor"].ran == [task.id]  # run once, under the registry's task id


@pytest.mark.django_db(transaction=True)
def test_the_generated_card_offers_the_queue_url_in_both_bindings_without_streaming(
    relay, queue_agent, anon
):
    card = anon.get(f"/a2a/agents/{queue_agent['agent']['id']}").json()
    url = f"{relay['url']}/a2a/queue/{queue_agent['endpoint']}"
    assert [(i["url"], i["protocolBinding"]) for i in card["supportedInterfaces"]] == [
        (url, "JSONRPC"),
        (url, "HTTP+JSON"),
    ]
    assert card["capabilities"]["streaming"] is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_paused_agent_leaves_the_task_submitted_and_then_completes_it_once(
    relay, queue_agent, alice, settings, binding
):
    """The agent's consumer is not running: the message waits in its queue, the caller gets
    the submitted task (at once, or after the wait), and the task completes, once, when the
    agent comes back."""
    queue_agent["start"]()
    queue_agent["pause"]()  # declared, then stopped: nobody consumes the queue
    settings.QUEUE_RELAY_WAIT_SECONDS = 1
    key = bearer(alice)

    async def submit(client):
        at_once = await send(client, ask(INVOICE, return_immediately=True))
        waited = await send(client, ask(INVOICE))
        return at_once, waited

    at_once, waited = with_client(
        relay["url"], queue_agent["agent"]["id"], binding, submit, authorization=key
    )
    assert at_once.status.state == TaskState.TASK_STATE_SUBMITTED
    assert waited.status.state == TaskState.TASK_STATE_SUBMITTED

    queue_agent["stop"].clear()
    queue_agent["start"]()

    async def until_done(client):
        for _ in range(200):
            tasks = [await client.get_task(GetTaskRequest(id=t.id)) for t in (at_once, waited)]
            if all(t.status.state == TaskState.TASK_STATE_COMPLETED for t in tasks):
                return tasks
            await asyncio.sleep(0.05)
        return tasks

    done = with_client(
        relay["url"], queue_agent["agent"]["id"], binding, until_done, authorization=key
    )
    assert [t.status.state for t in done] == [TaskState.TASK_STATE_COMPLETED] * 2
    assert sorted(queue_agent["executor"].ran) == sorted([at_once.id, waited.id])
    assert RelayTask.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_another_key_or_authorization_cannot_read_the_task(relay, queue_agent, alice, bob, anon):
    queue_agent["start"]()
    agent_id = queue_agent["agent"]["id"]

    async def create(client):
        return await send(client, ask(INVOICE))

    def reader(task_id):
        async def work(client):
            try:
                return await client.get_task(GetTaskRequest(id=task_id))
            except A2AError as exc:
                return exc

        return work

    async def listed(client):
        return await client.list_tasks(ListTasksRequest())

    keyed = with_client(relay["url"], agent_id, "JSONRPC", create, authorization=bearer(alice))
    token = with_client(relay["url"], agent_id, "HTTP+JSON", create, authorization="Bearer t-1")

    def get(task_id, authorization):
        return with_client(
            relay["url"], agent_id, "JSONRPC", reader(task_id), authorization=authorization
        )

    assert get(keyed.id, bearer(alice)).id == keyed.id
    assert isinstance(get(keyed.id, bearer(bob)), A2AError)
    assert isinstance(get(keyed.id, ""), A2AError)
    assert get(token.id, "Bearer t-1").id == token.id
    assert isinstance(get(token.id, "Bearer t-2"), A2AError)
    assert isinstance(get(token.id, bearer(alice)), A2AError)
    bobs = with_client(relay["url"], agent_id, "JSONRPC", listed, authorization=bearer(bob))
    assert list(bobs.tasks) == []
    # The agent gets the caller's own Authorization, never the caller's registry API key.
    seen = [h.get("authorization") for h in queue_agent["executor"].headers]
    assert seen == [None, "Bearer t-1"]


@pytest.mark.django_db(transaction=True)
def test_cancel_is_relayed_to_the_agent(relay, queue_agent, alice):
    queue_agent["start"]()

    async def work(client):
        task = await send(client, ask("hold", return_immediately=True))
        for _ in range(100):
            task = await client.get_task(GetTaskRequest(id=task.id))
            if task.status.state == TaskState.TASK_STATE_WORKING:
                break
            await asyncio.sleep(0.05)
        working = task.status.state
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        try:
            await client.cancel_task(CancelTaskRequest(id=task.id))
            again = None
        except A2AError as exc:
            again = exc
        return working, canceled, again

    working, canceled, again = with_client(
        relay["url"], queue_agent["agent"]["id"], "HTTP+JSON", work, authorization=bearer(alice)
    )
    assert working == TaskState.TASK_STATE_WORKING
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert "finished" in str(again)


@pytest.mark.django_db(transaction=True)
def test_a_hundred_concurrent_messages_all_complete(relay, queue_agent, alice, settings):
    # The live server's threads, not gunicorn's sync workers: here they may all wait
    # (test_relay_waiting holds the web process to its limits).
    settings.QUEUE_RELAY_WEB_WAITS = settings.QUEUE_RELAY_WEB_WAITS_PER_CLIENT = 100
    queue_agent["start"]()

    async def work(client):
        sent = await asyncio.gather(*(send(client, ask(INVOICE)) for _ in range(100)))
        # On a busy machine some answers come after the relay's wait: read those again.
        for _ in range(600):
            pending = [t.id for t in sent if t.status.state != TaskState.TASK_STATE_COMPLETED]
            if not pending:
                break
            await asyncio.sleep(0.1)
            read = {t.id: t for t in sent}
            for task_id in pending:
                read[task_id] = await client.get_task(GetTaskRequest(id=task_id))
            sent = list(read.values())
        return sent

    tasks = with_client(
        relay["url"], queue_agent["agent"]["id"], "JSONRPC", work, authorization=bearer(alice)
    )
    assert [t.status.state for t in tasks] == [TaskState.TASK_STATE_COMPLETED] * 100
    assert len({t.id for t in tasks}) == 100
    assert sorted(queue_agent["executor"].ran) == sorted(t.id for t in tasks)
    assert RelayTask.objects.filter(state="TASK_STATE_COMPLETED").count() == 100
