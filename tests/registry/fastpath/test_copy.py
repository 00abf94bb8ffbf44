"""New rows in bulk (COPY on PostgreSQL): what bulk_create with the same arguments stores."""

import pytest

from registry.access.models import AuditEntry
from registry.agents.models import Agent, Capability, CapabilityTag
from registry.discovery.models import AgentListing
from registry.fastpath.copy import objects_insert, rows_insert

pytestmark = pytest.mark.django_db


def _agent(name: str) -> Agent:
    return Agent.objects.create(name=name, owner="alice")


def test_rows_are_stored_with_their_values_json_and_defaults():
    agent = _agent("Copied")
    objects_insert(
        [
            Capability(agent=agent, name="Search", tags=["web", "news"], position=0),
            Capability(agent=agent, name="Sum", description="Adds up", position=1),
        ]
    )
    objects_insert([AuditEntry(action="agent.create", agent_id=agent.pk, after={"name": "Copied"})])
    stored = list(
        agent.capabilities.order_by("position").values_list("name", "tags", "description")
    )
    assert stored == [("Search", ["web", "news"], ""), ("Sum", [], "Adds up")]
    entry = AuditEntry.objects.get()  # its id and time from the database and auto_now_add
    assert (entry.action, entry.after, entry.before) == ("agent.create", {"name": "Copied"}, None)
    assert entry.pk is not None and entry.at is not None


def test_a_conflict_updates_the_named_fields_or_is_ignored():
    first, second = _agent("First"), _agent("Second")
    AgentListing.objects.create(agent=first, body=b'{"old":1}', context="c1")
    rows = [
        AgentListing(agent=first, body=b'{"new":1}', context="c2"),
        AgentListing(agent=second, body=b'{"new":2}', context="c2"),
    ]
    objects_insert(rows, unique_fields=["agent"], update_fields=["body"])
    stored = {
        a: (bytes(b), c) for a, b, c in AgentListing.objects.values_list("agent", "body", "context")
    }
    assert stored == {first.pk: (b'{"new":1}', "c1"), second.pk: (b'{"new":2}', "c2")}

    objects_insert([AgentListing(agent=first, body=b"{}", context="c3")], ignore_conflicts=True)
    assert bytes(AgentListing.objects.get(agent=first).body) == b'{"new":1}'


def test_nothing_to_insert_writes_nothing(django_assert_num_queries):
    with django_assert_num_queries(0):
        objects_insert([])


def test_rows_given_as_tuples_are_stored_as_instances_would_be():
    agent = _agent("Tagged")
    search = Capability.objects.create(agent=agent, name="Search", position=0)
    rows_insert(
        CapabilityTag, ("capability_id", "agent_id", "value"), [(search.pk, agent.pk, "web")]
    )
    rows_insert(CapabilityTag, ("capability_id", "agent_id", "value"), [])
    assert list(CapabilityTag.objects.values_list("capability", "agent", "value")) == [
        (search.pk, agent.pk, "web")
    ]


def test_rows_updated_in_bulk_change_only_the_named_fields():
    from datetime import UTC, datetime

    from registry.fastpath.copy import objects_update

    first, second, other = _agent("First"), _agent("Second"), _agent("Other")
    when = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    objects_update(
        [
            Agent(
                pk=first.pk,
                name="ignored",
                trust_score=80,
                trust_signals={"age": {"value": 1}},
                trust_changed_at=when,
            ),
            Agent(pk=second.pk, trust_score=5, trust_signals={}, trust_changed_at=when),
        ],
        ["trust_score", "trust_signals", "trust_changed_at"],
    )
    stored = {
        a.name: (a.trust_score, a.trust_signals, a.trust_changed_at) for a in Agent.objects.all()
    }
    assert stored["First"] == (80, {"age": {"value": 1}}, when)  # its name kept
    assert stored["Second"] == (5, {}, when)
    assert stored["Other"] == (other.trust_score, other.trust_signals, other.trust_changed_at)
