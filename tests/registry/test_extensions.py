"""The extension points: closed after start-up, and fact kinds filter as they declare."""

import pytest
from django.dispatch import receiver

from registry import extensions
from registry.agents.models import Agent
from registry.agents.services import AgentInput, agents_bulk_create
from registry.discovery.facts import agent_facts_set
from registry.discovery.filters import _fact_filter
from registry.extensions import ExtensionsClosed, FactKind
from registry.signals import agent_changed


def test_nothing_can_be_registered_after_start_up():
    with pytest.raises(ExtensionsClosed, match=r"register from AppConfig\.ready"):
        extensions.register_fact_kind(FactKind("late", "Registered too late."))
    assert "late" not in extensions.fact_kinds


def test_the_core_registers_its_own_source_and_demo_data():
    assert ("native", "Native registration") in extensions.sources.read()
    assert "native" in extensions.demo_loaders


@pytest.fixture
def three_agents(db):
    agents = {name: Agent.objects.create(name=name, owner="o") for name in ("a", "b", "c")}
    agent_facts_set(agent=agents["a"], kinds=["k"], facts=[("k", "true")])
    agent_facts_set(agent=agents["b"], kinds=["k"], facts=[("k", "false")])
    return agents


def names(queryset) -> list[str]:
    return sorted(queryset.values_list("name", flat=True))


@pytest.mark.parametrize(
    ("mode", "value", "expected"),
    [
        ("flag", "true", ["a"]),
        ("flag", "false", ["b"]),  # an agent without the fact is neither
        ("present", "true", ["a"]),
        ("present", "false", ["b", "c"]),  # every agent without a true fact
        ("exact", "true", ["a"]),
        ("iexact", "TRUE", ["a"]),
    ],
)
def test_a_fact_kind_filters_as_its_mode_says(three_agents, mode, value, expected):
    kind = FactKind("k", "A test kind.", filter=mode)
    method = _fact_filter(kind).method
    assert names(method(Agent.objects.all(), "k", value)) == expected


def test_setting_facts_replaces_only_the_given_kinds(three_agents):
    agent = three_agents["a"]
    agent_facts_set(agent=agent, kinds=["other"], facts=[("other", "x"), ("other", "x")])
    agent_facts_set(agent=agent, kinds=["k"], facts=[("k", "false")])
    stored = sorted(agent.facets.values_list("kind", "value"))
    assert stored == [("k", "false"), ("other", "x")]


def test_bulk_creation_sends_the_same_change_signal_per_agent(db):
    seen = []

    @receiver(agent_changed, weak=False, dispatch_uid="test-bulk-seen")
    def record(sender, agent, changed, writer, created, **kwargs):
        seen.append((agent.name, created, writer, "name" in changed))

    try:
        agents_bulk_create(owner="o", items=[AgentInput(name="x"), AgentInput(name="y")])
    finally:
        agent_changed.disconnect(dispatch_uid="test-bulk-seen")
    assert seen == [("x", True, "registry", True), ("y", True, "registry", True)]
    assert Agent.objects.filter(owner="o").count() == 2
