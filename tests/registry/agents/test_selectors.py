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
