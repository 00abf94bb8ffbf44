"""Writes that race (security review, item 4): row locks keep the agent, its served card
and the change feed in agreement, a retired agent stays retired, and If-Match turns a
write based on a stale read into a 412 that changes nothing."""

import json
import threading
import uuid

import httpx
import pytest

from registry.agents.models import Agent
from tests.protocols.a2a.sample_cards import card_on

pytest_plugins = ["tests.https_server", "tests.dns_server"]


@pytest.mark.django_db
def test_if_match_with_the_agents_etag_survives_heartbeats_and_refuses_stale_writes(
    alice, native_payload
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    url = f"/agents/{agent['id']}"
    read = alice.get(url)
    etag = read["ETag"]
    endpoint = agent["endpoints"][0]["id"]
    assert alice.post(f"{url}/endpoints/{endpoint}/heartbeat").status_code == 200
    assert alice.get(url)["ETag"] != etag  # the representation shows the heartbeat

    first = alice.patch(url, {"description": "first"}, format="json", HTTP_IF_MATCH=etag)
    assert first.status_code == 200, first.content  # a heartbeat is not a write
    stale = alice.patch(url, {"description": "second"}, format="json", HTTP_IF_MATCH=etag)
    weak = alice.patch(url, {"description": "third"}, format="json", HTTP_IF_MATCH=f"W/{etag}")
    gone = alice.delete(url, HTTP_IF_MATCH=etag)

    assert [stale.status_code, weak.status_code, gone.status_code] == [412, 412, 412]
    assert stale["Content-Type"] == "application/problem+json"
    assert alice.get(url).json()["description"] == "first"
    assert alice.delete(url, HTTP_IF_MATCH=first["ETag"]).status_code == 204


@pytest.mark.django_db
def test_if_match_on_a_card_write_takes_the_cards_etag(alice, anon, make_card):
    agent = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()
    url = f"/a2a/agents/{agent['id']}"
    etag = anon.get(url)["ETag"]

    renamed = alice.put(url, {"card": make_card(name="Renamed")}, format="json", HTTP_IF_MATCH=etag)
    stale = alice.put(url, {"card": make_card(name="Stale")}, format="json", HTTP_IF_MATCH=etag)

    assert renamed.status_code == 200
    assert stale.status_code == 412
    assert json.loads(anon.get(url).content)["name"] == "Renamed"


def race(client: httpx.Client, jobs: list) -> list[httpx.Response]:
    """Run the requests at once; their answers."""
    answers: list[httpx.Response] = []
    threads = [threading.Thread(target=lambda job=job: answers.append(job())) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.django_db(transaction=True)
def test_racing_put_patch_delete_and_verify_leave_agent_card_and_feed_in_agreement(
    live_server, network, https_server, make_key
):
    auth = {"Authorization": f"Bearer {make_key('alice')}"}
    domain = f"localhost:{https_server.port}"
    rounds, failures, kept = 8, [], set()
    with httpx.Client(base_url=live_server.url, headers=auth, timeout=60) as client:
        for round_ in range(rounds):
            path = f"/a2a/v{round_}"  # each round its own agent (its card identity)
            card = card_on(https_server, name=f"Agent {round_}")
            card["supportedInterfaces"][0]["url"] = https_server.url(path)
            https_server.json("/.well-known/agent-card.json", json.dumps(card).encode())
            created = client.post("/a2a/agents", json={"card": card})
            assert created.status_code == 201, created.text
            agent_id = created.json()["id"]

            def put(n: int, agent_id=agent_id, card=card) -> httpx.Response:
                new = {**card, "name": f"Put {n}", "description": f"put {n}"}
                return client.put(f"/a2a/agents/{agent_id}", json={"card": new})

            def patch(n: int, agent_id=agent_id) -> httpx.Response:
                return client.patch(f"/agents/{agent_id}", json={"description": f"patch {n}"})

            jobs = [lambda n=n: put(n) for n in range(3)] + [lambda n=n: patch(n) for n in range(3)]
            jobs.append(
                lambda agent_id=agent_id: client.post(
                    f"/a2a/agents/{agent_id}/verify", json={"domain": domain}
                )
            )
            if round_ % 2:
                jobs.insert(3, lambda agent_id=agent_id: client.delete(f"/agents/{agent_id}"))
            else:
                kept.add(agent_id)
            answers = race(client, jobs)

            failures += [
                f"{a.request.method} {a.request.url}: {a.status_code} {a.text[:200]}"
                for a in answers
                if a.status_code >= 500
            ]
            shown = client.get(f"/agents/{agent_id}")
            served = client.get(f"/a2a/agents/{agent_id}")
            feed = client.get("/discover/agents", params={"updated_since": "2000-01-01T00:00:00Z"})
            listed = agent_id in {a["id"] for a in feed.json()["results"]}
            buried = agent_id in {t["id"] for t in feed.json().get("deleted", [])}
            if round_ % 2:
                assert shown.json()["status"] == "retired", f"round {round_}: back"
                assert served.status_code == 410, f"round {round_}: its card is back"
                assert buried and not listed, f"round {round_}: the feed disagrees"
            else:
                assert listed and not buried, f"round {round_}: the feed disagrees"
                card_now, agent_now = json.loads(served.content), shown.json()
                assert (card_now["name"], card_now["description"]) == (
                    agent_now["name"],
                    agent_now["description"],
                ), f"round {round_}: the agent JSON and the served card disagree"
    assert not failures, failures
    active = Agent.objects.exclude(status=Agent.Status.RETIRED).values_list("id", flat=True)
    assert set(active) == {uuid.UUID(i) for i in kept}
