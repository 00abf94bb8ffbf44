"""Facts: the (kind, value) rows that the protocol apps write about an agent at write time
(registry.extensions fact kinds), which discovery filters and counts by."""

from collections.abc import Iterable

from registry.agents.models import Agent
from registry.discovery.models import AgentFacet


def agent_facts_set(*, agent: Agent, kinds: Iterable[str], facts: Iterable[tuple[str, str]]):
    """Replace the agent's facts of ``kinds`` (registry.extensions fact kinds) by ``facts``,
    (kind, value) pairs; values are cut to the column's length."""
    AgentFacet.objects.filter(agent=agent, kind__in=list(kinds)).delete()
    AgentFacet.objects.bulk_create(facts_rows(agent, facts))


def facts_rows(agent: Agent, facts: Iterable[tuple[str, str]]) -> list[AgentFacet]:
    """Unsaved fact rows of an agent (bulk writes save them at once), one per distinct pair."""
    return [
        AgentFacet(agent_id=agent_id, kind=kind, value=value)
        for agent_id, kind, value in facts_values(agent.pk, facts)
    ]


# The fields of ``facts_values``' tuples.
FACT_FIELDS = ("agent_id", "kind", "value")


def facts_values(agent_id, facts: Iterable[tuple[str, str]]) -> list[tuple]:
    """An agent's fact rows as tuples of ``FACT_FIELDS``, one per distinct pair (values cut
    to the column's length): what bulk writes insert with ``fastpath.copy.rows_insert``."""
    limit = AgentFacet._meta.get_field("value").max_length
    return [
        (agent_id, kind, value)
        for kind, value in sorted({(kind, value[:limit]) for kind, value in facts if value})
    ]
