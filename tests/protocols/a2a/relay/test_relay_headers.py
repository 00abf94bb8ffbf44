"""What of the caller's request reaches the agent, on the local RabbitMQ: never a registry
key, however it was sent; forwarded headers within their size limits, so that a call past
them is refused before anything is published and the broker connection stays usable."""

import uuid

import httpx
import pytest

from protocols.a2a.models import RelayTask
from tests.protocols.a2a.conftest import queue_take
from tests.protocols.a2a.relay.test_queue_relay import bearer


def send_at_once(url: str, *, rest: bool = False, **headers) -> httpx.Response:
    """A SendMessage with returnImmediately (it takes no waiting place), JSON-RPC or REST."""
    params = {
        "message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": "hi"}]},
        "configuration": {"returnImmediately": True},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    return httpx.post(
        f"{url}/message:send" if rest else url,
        json=params if rest else body,
        headers={"A2A-Version": "1.0", **headers},
        timeout=30,
    )


@pytest.mark.django_db(transaction=True)
def test_a_registry_key_never_reaches_the_agent_however_it_is_sent(relay, idle_queue, alice, bob):
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"
    alice_key = bearer(alice).split()[1]
    calls = [
        {"X-Api-Key": alice_key, "Authorization": bearer(bob)},
        {"X-Api-Key": alice_key, "Authorization": f"bearer  {bearer(bob).split()[1]}"},
        {"X-Api-Key": alice_key, "Authorization": "Bearer agent-token", "A2A-Extensions": "x"},
    ]
    for headers in calls:
        assert "result" in send_at_once(url, **headers).json()

    published = [m.headers for m in queue_take(relay["broker"], idle_queue["queue"])]
    assert len(published) == 3
    assert [h.get("authorization") for h in published] == [None, None, "Bearer agent-token"]
    assert all("x-api-key" not in h for h in published)
    assert all(alice_key not in str(h) and bearer(bob)[7:] not in str(h) for h in published)
    assert published[2]["a2a-extensions"] == "x"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("rest", [False, True])
def test_forwarded_headers_past_their_limits_are_refused_and_the_next_call_is_relayed(
    relay, idle_queue, alice, rest
):
    """Past the broker's frame size a message's headers broke the kept connection (and the
    caller was told the broker could not be reached): now each header and all of them are
    held to limits first, and nothing is published."""
    url = f"{relay['url']}/a2a/queue/{idle_queue['endpoint']}"
    key = {"Authorization": bearer(alice)}
    frame_breaking = {f"A2A-Big-{n}": "x" * 60_000 for n in range(3)}
    many = {f"A2A-Part-{n}": "y" * 8000 for n in range(5)}

    refused = [
        send_at_once(url, rest=rest, **key, **frame_breaking),
        send_at_once(url, rest=rest, **key, **many),
    ]
    relayed = send_at_once(url, rest=rest, **key)

    for response in refused:
        assert response.status_code == 400, response.text
        assert response.headers["Content-Type"] == "application/problem+json"
    assert refused[0].json()["errors"][0]["path"] == "headers.a2a-big-0"
    assert "QUEUE_RELAY_HEADER_MAX_BYTES" in refused[0].json()["errors"][0]["message"]
    assert refused[1].json()["errors"][0]["path"] == "headers.a2a-part-4"
    assert "QUEUE_RELAY_HEADERS_MAX_BYTES" in refused[1].json()["errors"][0]["message"]
    assert relayed.status_code == 200, relayed.text
    (task_id,) = RelayTask.objects.values_list("id", flat=True)
    (message,) = queue_take(relay["broker"], idle_queue["queue"])
    assert message.properties["correlation_id"] == task_id
