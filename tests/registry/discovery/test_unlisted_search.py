"""Text search (``q``) over the agents that are not publicly listed, for the callers who may
read them (registry.discovery.search's ``unlisted_searched``): their words are kept apart
(``UnlistedSearchText``), matched for those callers only, and ranked among the public
matches; nobody else finds them."""

import json

import pytest
from django.db import connection

from registry.agents.models import AgentSearchText
from registry.agents.unlisted_text import UnlistedSearchText
from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call


def _found(client, q: str, **params) -> list[str]:
    answer = client.get("/discover/agents", {"q": q, "limit": 100, **params})
    assert answer.status_code == 200, answer.content
    return [a["id"] for a in answer.json()["results"]]


def _register(client, native_payload, name: str, description: str, **members) -> str:
    payload = {**native_payload(), "name": name, "description": description, **members}
    answer = client.post("/agents", payload, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_restricted_agent_is_found_by_its_words_by_its_readers_only(
    alice, bob, anon, client_for, admin_client, native_payload, mode
):
    carol = client_for("carol")
    key_id = carol.get("/api-keys").json()["results"][0]["id"]
    admin_client.patch(f"/api-keys/{key_id}", {"groups": ["team-a"]}, format="json")
    private = _register(alice, native_payload, "Zephyrine Ledger", "Balances the books.")
    grouped = _register(
        alice,
        native_payload,
        "Quillmate Scribe",
        "Takes minutes for zephyrine meetings.",
        visibility="groups",
        visibilityGroups=["team-a"],
    )
    alice.patch(f"/agents/{private}", {"visibility": "private"}, format="json")
    assert not AgentSearchText.objects.filter(agent_id__in=[private, grouped]).exists()
    assert UnlistedSearchText.objects.filter(agent_id__in=[private, grouped]).count() == 2

    for reader in (alice, admin_client):
        assert set(_found(reader, "zephyr", mode=mode)) == {private, grouped}
        assert _found(reader, "ledg", mode=mode)[0] == private  # a prefix of a word
    assert _found(carol, "zephyr", mode=mode) == [grouped]
    for outsider in (bob, anon):
        assert _found(outsider, "zephyr", mode=mode) == []
    if mode == "keyword":  # (hybrid adds the agents nearest by meaning)
        # Every word must start a word of the agent's; LIKE's wildcards are plain letters.
        assert _found(alice, "ledg", mode=mode) == [private]
        assert _found(alice, "zephyrine books", mode=mode) == [private]
        assert _found(alice, "zephyrine nowhere", mode=mode) == []
        assert _found(alice, "zeph_rine", mode=mode) == []


@pytest.mark.django_db
def test_a_readers_words_rank_its_restricted_agents_among_the_public_ones(alice, native_payload):
    public = _register(alice, native_payload, "Harbor Pilot", "Knows the zephyrine winds.")
    private = _register(
        alice, native_payload, "Zephyrine Pilot", "Plans routes.", visibility="private"
    )
    found = _found(alice, "zephyrine", mode="keyword")
    assert set(found) == {public, private}
    if connection.vendor == "postgresql":
        # The relevance tiers: a match in the name before a match in the description.
        assert found == [private, public]
    else:  # (bm25 ranks the indexed text; an unlisted agent's words after it)
        assert found == [public, private]
    # Another sort and the facets of the same words count it too.
    answer = alice.get("/discover/agents", {"q": "zephyrine", "sort": "name", "facets": "tag"})
    names = [a["name"] for a in answer.json()["results"]]
    assert names == ["Harbor Pilot", "Zephyrine Pilot"]
    assert answer.json()["facets"]["tag"] == [{"value": "nlp", "count": 2}]


@pytest.mark.django_db
def test_the_words_follow_the_agents_writes_and_go_with_its_retirement(alice, native_payload):
    agent_id = _register(
        alice, native_payload, "Zephyrine Ledger", "Balances.", visibility="private"
    )
    assert _found(alice, "ledger") == [agent_id]
    alice.patch(f"/agents/{agent_id}", {"name": "Zephyrine Almanac"}, format="json")
    assert _found(alice, "ledger") == []
    assert _found(alice, "almanac") == [agent_id]
    # Public: its indexed text, the same words; private again: its words apart again.
    alice.patch(f"/agents/{agent_id}", {"visibility": "public"}, format="json")
    assert AgentSearchText.objects.filter(agent_id=agent_id).exists()
    assert not UnlistedSearchText.objects.filter(agent_id=agent_id).exists()
    alice.patch(f"/agents/{agent_id}", {"visibility": "private"}, format="json")
    assert _found(alice, "almanac") == [agent_id]
    alice.delete(f"/agents/{agent_id}")
    assert not UnlistedSearchText.objects.filter(agent_id=agent_id).exists()
    assert _found(alice, "almanac") == []


@pytest.mark.django_db
def test_an_agent_the_moderators_hold_is_found_by_its_owners_words(
    alice, bob, admin_client, native_payload
):
    agent_id = _register(alice, native_payload, "Zephyrine Ledger", "Balances the books.")
    held = admin_client.post(f"/agents/{agent_id}/quarantine", {"reason": "spam"}, format="json")
    assert held.status_code == 200, held.content
    assert _found(alice, "ledger") == [agent_id]
    assert _found(bob, "ledger") == []


@pytest.mark.django_db
def test_no_unlisted_agent_is_embedded_nor_found_by_meaning_on_the_lean_lane(
    alice, admin_client, native_payload, settings
):
    """The lane's hybrid first page takes the index's nearest agents as discoverable: an
    agent registered restricted, or held for review, has no vector until it is listed."""
    from registry.semantic.models import AgentVector

    description = "Balances zephyrine books."
    private = _register(
        alice, native_payload, "Zephyrine Ledger", description, visibility="private"
    )
    grouped = _register(
        alice,
        native_payload,
        "Zephyrine Scribe",
        description,
        visibility="groups",
        visibilityGroups=["team-a"],
    )
    settings.REGISTRY_ADMISSION = "review"
    held = _register(alice, native_payload, "Zephyrine Clerk", description)
    settings.REGISTRY_ADMISSION = "open"
    public = _register(alice, native_payload, "Harbor Pilot", description)
    unlisted = {private, grouped, held}
    assert not AgentVector.objects.filter(agent_id__in=unlisted).exists()
    assert AgentVector.objects.filter(agent_id=public).exists()

    app = LeanApplication(Recorder())
    for query in ("zephyrine", "balances books", "zephyrine&mode=semantic", "books&tag=nlp"):
        status, _, body = call(app, "GET", f"/discover/agents?q={query.replace(' ', '%20')}")
        assert status == 200
        found = {a["id"] for a in json.loads(body)["results"]}
        assert public in found and not found & unlisted, query
    # Listed, it is embedded (and found by meaning).
    alice.patch(f"/agents/{private}", {"visibility": "public"}, format="json")
    assert AgentVector.objects.filter(agent_id=private).exists()
    answer = json.loads(call(app, "GET", "/discover/agents?q=zephyrine&mode=semantic")[2])
    assert private in {a["id"] for a in answer["results"]}
