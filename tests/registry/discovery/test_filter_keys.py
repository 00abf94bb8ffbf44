"""Every agent's filter keys (AgentFilterKeys, kept by PostgreSQL's triggers, migration
0022) are what the filters' own tables say after every kind of write: a registration, a
replacement, a rename, new and removed facts, a retirement, a deletion."""

import pytest
from django.db import connection

from registry.agents.models import Agent, Capability, CapabilityTag
from registry.discovery.facts import agent_facts_set
from registry.discovery.models import AgentFacet

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def stored() -> dict:
    """{agent id: (keys, name key, discoverable, created_at)} as the table holds them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT agent_id, tsvector_to_array(keys), name_key, discoverable, created_at "
            "FROM registry_agentfilterkeys"
        )
        return {pk: (set(keys), name, found, at) for pk, keys, name, found, at in cursor}


def expected() -> dict:
    """The same, read from the agents, their capabilities, tags and facts."""
    found = {}
    for agent in Agent.objects.all():
        keys = {
            f"~tag {t}"
            for t in CapabilityTag.objects.filter(agent=agent).values_list("value", flat=True)
        }
        names = Capability.objects.filter(agent=agent).values_list("name", flat=True)
        keys |= {f"~capability {name.lower()}" for name in names}
        facts = AgentFacet.objects.filter(agent=agent).values_list("kind", "value")
        keys |= {f"~f {kind} {value}" for kind, value in facts}
        found[agent.pk] = (keys, agent.name.lower(), agent.status != "retired", agent.created_at)
    return found


def register(client, payload) -> str:
    response = client.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_the_keys_follow_every_write_of_an_agent(alice, native_payload):
    first = register(
        alice,
        native_payload(
            name="Tide Tables",
            capabilities=[
                {"name": "Tides", "tags": ["Sea", "forecast"]},
                {"name": "Moon phases", "tags": ["sea"]},  # a tag twice: one key
            ],
        ),
    )
    second = register(alice, native_payload(name="Invoice Reader", capabilities=[]))
    assert stored() == expected()
    keys = stored()[Agent.objects.get(pk=first).pk][0]
    assert {"~tag sea", "~tag forecast", "~capability tides", "~capability moon phases"} <= keys

    # A replacement: other capabilities and tags, another name.
    replaced = native_payload(
        name="Harbour Tides", capabilities=[{"name": "Ports", "tags": ["harbour"]}]
    )
    assert alice.put(f"/agents/{first}", replaced, format="json").status_code == 200
    # A rename alone.
    assert (
        alice.patch(f"/agents/{second}", {"name": "Bill Reader"}, format="json").status_code == 200
    )
    assert stored() == expected()
    assert "~tag sea" not in stored()[Agent.objects.get(pk=first).pk][0]
    assert stored()[Agent.objects.get(pk=second).pk][1] == "bill reader"

    # Facts replaced, as the protocol apps replace them; then removed.
    agent = Agent.objects.get(pk=second)
    agent_facts_set(agent=agent, kinds=["streaming"], facts=[("streaming", "true")])
    agent_facts_set(agent=agent, kinds=["kind"], facts=[("kind", "Billing"), ("kind", "ocr")])
    assert stored() == expected()
    assert {"~f streaming true", "~f kind Billing"} <= stored()[agent.pk][0]
    AgentFacet.objects.filter(agent=agent, kind="kind").delete()
    AgentFacet.objects.filter(agent=agent, kind="streaming").update(value="false")
    assert stored() == expected()
    assert "~f streaming false" in stored()[agent.pk][0]

    # The agent's row alone written: its sort key and whether discovery finds it.
    Agent.objects.filter(pk=second).update(name="Quay Reader", status="deprecated")
    assert stored() == expected()
    assert stored()[agent.pk][1:3] == ("quay reader", True)
    Agent.objects.filter(pk=second).update(status="retired")
    assert stored()[agent.pk][2] is False
    Agent.objects.filter(pk=second).update(status="active")
    assert stored() == expected()

    # Retired: kept, not discoverable; deleted: gone.
    assert alice.delete(f"/agents/{first}").status_code == 204
    assert stored() == expected()
    assert stored()[Agent.objects.get(pk=first).pk][2] is False
    Agent.objects.filter(pk=second).delete()
    assert stored() == expected()
    assert set(stored()) == {Agent.objects.get(pk=first).pk}


def test_the_keys_of_a_write_of_many_agents_at_once_are_each_agents(alice, native_payload):
    from registry.agents.services import AgentInput, CapabilityInput, agents_bulk_create

    items = [
        AgentInput(
            name=f"Bulk {index}",
            capabilities=[
                CapabilityInput(name=f"Skill {index % 3}", tags=[f"t{index % 4}", "all"])
            ],
        )
        for index in range(12)
    ]
    created = agents_bulk_create(owner="alice", items=items)
    assert len(created) == 12
    assert stored() == expected()
    with_t1 = {pk for pk, (keys, *_) in stored().items() if "~tag t1" in keys}
    assert len(with_t1) == 3
