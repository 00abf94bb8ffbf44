"""Reads of agents with what the agent JSON shows; the receivers of one ``agents_written``
read each agent once between them."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.agents.models import Agent, Capability
from registry.agents.selectors import agents_by_id
from registry.signals import agents_written, agents_written_send

pytestmark = pytest.mark.django_db


def test_the_receivers_of_one_agents_written_share_each_agent_read():
    agent = Agent.objects.create(name="Shared", owner="alice")
    Capability.objects.create(agent=agent, name="Search", position=0)
    gone = uuid.uuid4()
    seen = []

    def probe(sender, agent_ids, **kwargs):
        with CaptureQueriesContext(connection) as queries:
            read = agents_by_id(agent_ids)
        seen.append((read, len(queries)))

    # After the registry's own receivers (discovery's listings read the agents first).
    agents_written.connect(probe, dispatch_uid="test-probe-1", weak=False)
    agents_written.connect(probe, dispatch_uid="test-probe-2", weak=False)
    try:
        agents_written_send([agent.pk, gone])
    finally:
        agents_written.disconnect(dispatch_uid="test-probe-1")
        agents_written.disconnect(dispatch_uid="test-probe-2")

    (first, first_queries), (second, second_queries) = seen
    assert list(first) == [agent.pk]  # the gone agent is not there
    assert second[agent.pk] is first[agent.pk]
    assert (first_queries, second_queries) == (0, 0)
    assert [c.name for c in first[agent.pk].capabilities.all()] == ["Search"]

    # Outside a dispatch every call reads afresh.
    with CaptureQueriesContext(connection) as queries:
        again = agents_by_id([agent.pk])
    assert again[agent.pk] is not first[agent.pk] and len(queries) >= 1


def test_what_search_by_meaning_embeds_is_the_same_from_the_shared_read(alice, native_payload):
    from registry.semantic.text import meaning_texts

    payload = native_payload(
        name="Weather Desk",
        description="Forecasts for any city.",
        capabilities=[
            {"name": "forecast", "description": "Tomorrow's weather.", "tags": ["weather", "rain"]},
            {"name": "alerts", "tags": []},
        ],
    )
    agent_id = uuid.UUID(alice.post("/agents", payload, format="json").json()["id"])
    alone = meaning_texts([agent_id])
    shared = []

    def probe(sender, agent_ids, **kwargs):
        shared.append(meaning_texts(agent_ids))

    agents_written.connect(probe, dispatch_uid="test-meaning", weak=False)
    try:
        agents_written_send([agent_id])
    finally:
        agents_written.disconnect(dispatch_uid="test-meaning")
    assert shared == [alone]
    assert alone[agent_id] == (
        "Weather Desk. Forecasts for any city.. forecast. Tomorrow's weather.. weather rain. alerts"
    )


def test_an_agent_named_by_its_id_as_text_is_read_and_its_listing_rebuilt():
    from registry.discovery.models import AgentListing

    agent = Agent.objects.create(name="Before", owner="alice")
    agents_written_send([agent.pk])
    Agent.objects.filter(pk=agent.pk).update(name="After")
    agents_written_send([str(agent.pk)])  # as a test or an app may have it, from JSON
    assert b'"name":"After"' in bytes(AgentListing.objects.get(agent=agent).body)
