"""An agent's visibility (registry.agents.visibility): its writes, checks and audit, its
interplay with moderation, and who reads a restricted agent (by owner, by group, by the
groups an admin gives a key)."""

import pytest
from django.contrib.auth.models import AnonymousUser

from registry.access.models import AuditEntry
from registry.agents.models import Agent, Tombstone
from registry.agents.visibility import readable_by, sees_restricted


@pytest.fixture
def member(client_for):
    return client_for("carol")


def _ids(client, path="/discover/agents?limit=100") -> list[str]:
    response = client.get(path)
    assert response.status_code == 200, response.content
    return [a["id"] for a in response.json()["results"]]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("members", "path"),
    [
        ({"visibility": "secret"}, "visibility"),
        ({"visibility": "groups"}, "visibilityGroups"),
        ({"visibility": "groups", "visibilityGroups": []}, "visibilityGroups"),
        ({"visibility": "groups", "visibilityGroups": ["ok", "has space"]}, "visibilityGroups[1]"),
        ({"visibility": "groups", "visibilityGroups": [f"g{i}" for i in range(21)]}, None),
        ({"visibility": "private", "visibilityGroups": ["team-a"]}, "visibilityGroups"),
        ({"visibilityGroups": "team-a"}, "visibilityGroups"),
    ],
)
def test_a_bad_visibility_is_a_problem_naming_the_member_and_writes_nothing(
    alice, native_payload, members, path
):
    response = alice.post("/agents", {**native_payload(), **members}, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    paths = [e["path"] for e in response.json()["errors"]]
    assert (path or "visibilityGroups") in paths
    assert Agent.objects.count() == 0

    agent = alice.post("/agents", native_payload(), format="json").json()
    changed = alice.patch(f"/agents/{agent['id']}", members, format="json")
    assert changed.status_code == 400
    assert alice.get(f"/agents/{agent['id']}").json()["visibility"] == "public"


@pytest.mark.django_db
def test_a_private_agent_is_its_owners_and_the_admins_only(
    alice, bob, anon, admin_client, native_payload
):
    agent = alice.post("/agents", {**native_payload(), "visibility": "private"}, format="json")
    assert agent.status_code == 201, agent.content
    body = agent.json()
    assert (body["visibility"], body["visibilityGroups"]) == ("private", [])
    agent_id = body["id"]
    for reader in (alice, admin_client):
        assert reader.get(f"/agents/{agent_id}").status_code == 200
        assert agent_id in _ids(reader)
    unknown = "0f0e0d0c-0b0a-4908-8706-050403020100"
    for stranger in (bob, anon):
        refused = stranger.get(f"/agents/{agent_id}")
        assert refused.status_code == 404
        assert refused.json()["type"].endswith("/problems/not-found")
        assert refused.json()["detail"] == f"There is no agent {agent_id}."
        assert (
            stranger.get(f"/agents/{unknown}").json()["detail"] == f"There is no agent {unknown}."
        )
        assert agent_id not in _ids(stranger)
    # A write by another owner is an unknown id's too: no 403 tells that it exists.
    assert bob.patch(f"/agents/{agent_id}", {"name": "x"}, format="json").status_code == 404
    # Never public: no tombstone tells a mirror of it.
    assert not Tombstone.objects.filter(agent_id=agent_id).exists()


@pytest.mark.django_db
def test_a_group_agent_is_read_by_the_keys_an_admin_puts_in_its_group(
    alice, member, admin_client, native_payload
):
    payload = {**native_payload(), "visibility": "groups", "visibilityGroups": ["team-a"]}
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    assert member.get(f"/agents/{agent_id}").status_code == 404
    assert agent_id not in _ids(member)

    key_id = member.get("/api-keys").json()["results"][0]["id"]
    given = admin_client.patch(f"/api-keys/{key_id}", {"groups": ["team-a"]}, format="json")
    assert given.status_code == 200, given.content
    assert member.get(f"/agents/{agent_id}").json()["visibilityGroups"] == ["team-a"]
    assert agent_id in _ids(member)
    assert agent_id in _ids(member, "/agents?limit=100&facets=tag")
    # The member may read it, not change it.
    assert member.patch(f"/agents/{agent_id}", {"name": "x"}, format="json").status_code == 403

    # Out of the group again, its cached discovery pages are not served to it.
    admin_client.patch(f"/api-keys/{key_id}", {"groups": []}, format="json")
    assert agent_id not in _ids(member)
    assert member.get(f"/agents/{agent_id}").status_code == 404


@pytest.mark.django_db
def test_a_visibility_change_is_audited_and_public_again_is_listed_again(
    alice, anon, native_payload
):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    assert agent_id in _ids(anon)
    patch = {"visibility": "groups", "visibilityGroups": ["team-b", "team-a", "team-a"]}
    changed = alice.patch(f"/agents/{agent_id}", patch, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["visibilityGroups"] == ["team-a", "team-b"]
    assert agent_id not in _ids(anon)
    # Was public: a mirror sees it deleted.
    assert Tombstone.objects.filter(agent_id=agent_id).exists()
    alice.patch(f"/agents/{agent_id}", {"visibility": "public"}, format="json")
    assert agent_id in _ids(anon)
    entries = AuditEntry.objects.filter(action="agent.visibility").order_by("id")
    assert [(e.before, e.after, e.actor) for e in entries] == [
        (
            {"visibility": "public", "visibilityGroups": []},
            {"visibility": "groups", "visibilityGroups": ["team-a", "team-b"]},
            "alice",
        ),
        (
            {"visibility": "groups", "visibilityGroups": ["team-a", "team-b"]},
            {"visibility": "public", "visibilityGroups": []},
            "alice",
        ),
    ]


@pytest.mark.django_db
def test_releasing_a_private_agent_from_quarantine_does_not_make_it_public(
    alice, anon, admin_client, native_payload
):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    quarantined = admin_client.post(
        f"/agents/{agent_id}/quarantine", {"reason": "phishing"}, format="json"
    )
    assert quarantined.status_code == 200
    alice.patch(f"/agents/{agent_id}", {"visibility": "private"}, format="json")
    assert admin_client.delete(f"/agents/{agent_id}/quarantine").status_code == 200
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.admitted, agent.listed) == (True, False)
    assert anon.get(f"/agents/{agent_id}").status_code == 404
    alice.patch(f"/agents/{agent_id}", {"visibility": "public"}, format="json")
    assert anon.get(f"/agents/{agent_id}").status_code == 200


@pytest.mark.django_db
def test_anonymous_reads_ask_nothing_more(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert sees_restricted(AnonymousUser()) is False
        assert "listed" in str(readable_by(AnonymousUser()).query)


@pytest.mark.django_db
def test_the_benchmark_makes_a_share_of_the_agents_private_the_same_ones_again(
    alice, native_payload
):
    from bench.load import agents_make_private

    for index in range(40):
        alice.post("/agents", native_payload(name=f"Agent {index}"), format="json")
    made = agents_make_private(1, 0.25)
    assert 0 < made < 40
    private = set(Agent.objects.filter(visibility="private", listed=False).values_list("pk"))
    assert len(private) == made
    assert agents_make_private(1, 0.25) == 0  # the same agents: none left to make private
