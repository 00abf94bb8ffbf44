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


def test_inside_a_bulk_write_the_keys_are_refreshed_once_at_its_end(alice, native_payload):
    """``filter_keys_at_end``: the triggers note the agents and one refresh at the block's
    end writes their keys: new agents, new and removed facts, a rename, a deletion."""
    from django.db import transaction

    from registry.agents.services import AgentInput, CapabilityInput, agents_bulk_create
    from registry.discovery.filter_keys import filter_keys_at_end

    kept = Agent.objects.get(pk=register(alice, native_payload(name="Ferry Times")))
    gone = Agent.objects.get(pk=register(alice, native_payload(name="Old Ferry")))
    before = stored()
    with transaction.atomic(), filter_keys_at_end():
        created = agents_bulk_create(
            owner="alice",
            items=[
                AgentInput(name=f"Deferred {n}", capabilities=[CapabilityInput(name="Sail")])
                for n in range(3)
            ],
        )
        agent_facts_set(agent=kept, kinds=["kind"], facts=[("kind", "ferry")])
        renamed = alice.patch(f"/agents/{kept.pk}", {"name": "Ferry Tables"}, format="json")
        assert renamed.status_code == 200
        Agent.objects.filter(pk=gone.pk).delete()
        # Noted, not refreshed yet: no row for the new agents, the fact not in the keys.
        inside = stored()
        assert not {agent.pk for agent in created} & set(inside)
        assert "~f kind ferry" not in inside[kept.pk][0]
        assert inside[kept.pk][1] == "ferry tables"  # a rename changes the row at once
        assert gone.pk not in inside  # and so does a deletion
    assert stored() == expected()
    assert {agent.pk for agent in created} <= set(stored())
    assert "~f kind ferry" in stored()[kept.pk][0]
    # (and the trust score's band, a fact of every agent: registry/trust/)
    assert stored()[created[0].pk][0] == {"~capability sail", "~f trustBand 0-24"}
    assert set(before) - set(stored()) == {gone.pk}


def test_a_bulk_write_that_fails_refreshes_nothing_and_the_next_one_works(alice, native_payload):
    from django.db import transaction

    from registry.agents.services import AgentInput, agents_bulk_create
    from registry.discovery.filter_keys import filter_keys_at_end

    with pytest.raises(RuntimeError), transaction.atomic(), filter_keys_at_end():
        agents_bulk_create(owner="alice", items=[AgentInput(name="Never Kept")])
        raise RuntimeError("the write fails")
    assert not Agent.objects.exists() and stored() == {}
    # The block's table and setting went with the transaction: the triggers refresh at once.
    register(alice, native_payload(name="Kept At Once"))
    assert stored() == expected() and len(stored()) == 1
    with transaction.atomic(), filter_keys_at_end():  # and a block after it defers again
        agents_bulk_create(owner="alice", items=[AgentInput(name="Later")])
        assert len(stored()) == 1
    assert stored() == expected() and len(stored()) == 2
