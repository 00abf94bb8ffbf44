"""Discovery's index tables, written at write time so that reads never scan documents:
facts (kind, value) per agent, PostgreSQL's full-text vectors, the stored listings and the
data generation that keeps cached pages and counts exact."""

from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F
from django.db.models.functions import Lower

from registry.agents.models import Agent


class AgentFacet(models.Model):
    """An indexed (kind, value) fact about an agent, for filters and facet counts.

    Protocol apps write them at write time from what they know (an A2A card's bindings,
    versions, provider, extensions, security schemes…), so reads never scan documents.
    """

    # Indexed by agent_facet_agent, which facet counts read alone (an index-only scan).
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="facets", db_index=False
    )
    kind = models.CharField(max_length=40)
    value = models.CharField(max_length=300)

    class Meta:
        indexes = [
            models.Index(fields=["kind", "value", "agent"], name="agent_facet_lookup"),
            models.Index(fields=["agent", "kind", "value"], name="agent_facet_agent_value"),
            # The case-insensitive fact filters' (a provider): lower(value) on both sides.
            models.Index(F("kind"), Lower("value"), name="agent_facet_kind_lower"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}={self.value}"


class AgentSearchVector(models.Model):
    """PostgreSQL's full-text index of AgentSearchText: the text's tsvector alone, in a narrow
    table (GIN-indexed) kept by triggers on the text table (migration 0005), so that ranking
    many matches reads half the pages it would with the text beside it. Empty on SQLite,
    which searches its FTS5 table; see registry/discovery/search.py.

    ``created_at``: the agent's, copied by the trigger (migration 0008), so that a relevance
    tier is read newest first from this table alone: sorting a few matches, or walking the
    ``search_vector_created`` index while most rows match. ``canonical``: the agent is no
    copy of a duplicate group, which collapsed queries (the lean lane's) test.
    """

    agent = models.OneToOneField(
        Agent,
        on_delete=models.DO_NOTHING,  # the text table's delete trigger removes the row
        db_constraint=False,
        primary_key=True,
        related_name="+",
    )
    tsv = SearchVectorField()
    created_at = models.DateTimeField()
    # No copy of a duplicate group (``Agent.duplicate_of`` is null): what a collapsed
    # query reads, kept by the triggers with the agent's regroups (migration 0038).
    canonical = models.BooleanField(default=True, db_default=True)

    class Meta:
        indexes = [models.Index(fields=["-created_at", "agent"], name="search_vector_created")]

    def __str__(self) -> str:
        return str(self.agent_id)


class AgentFilterKeys(models.Model):
    """PostgreSQL: every agent's exact filter keys in one GIN-indexed ``tsvector``, so that a
    query of several filters finds the agents in all of them by one index lookup (the
    lean lane's ``discovery.keyed``), where the filters' own tables are joined one set
    against the other. Kept by triggers on the agent, capability, tag and fact tables
    (migration 0022): ``~tag <value>`` (as CapabilityTag holds it), ``~capability <lower
    name>``, ``~f <kind> <value>`` (each AgentFacet, as stored), and the agent's sort keys,
    whether discovery finds it and whether it is a copy of a duplicate group (migration
    0038). Empty on SQLite."""

    agent = models.OneToOneField(
        Agent,
        on_delete=models.DO_NOTHING,  # the agent table's delete trigger removes the row
        db_constraint=False,
        primary_key=True,
        related_name="+",
    )
    keys = SearchVectorField()
    created_at = models.DateTimeField()
    name_key = models.TextField()  # lower(name), the "name" sort's key
    discoverable = models.BooleanField()  # listed and not retired
    canonical = models.BooleanField(default=True, db_default=True)  # no copy (migration 0038)

    def __str__(self) -> str:
        return str(self.agent_id)


class AgentListing(models.Model):
    """An agent's JSON as discovery lists it, stored at write time (registry/discovery/listings.py):
    every part but the endpoints' liveness and the agent's live and uptime, which change
    without a write (heartbeats, probes) and are merged in when a page is read.

    ``context``: a digest of what the body depends on besides the agent's rows (the base
    URL of its links, the members the apps registered); a listing of another context is
    not served, and ``migrate`` builds it again."""

    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="listing"
    )
    body = models.BinaryField()
    context = models.CharField(max_length=16)

    def __str__(self) -> str:
        return str(self.agent_id)


class DataGeneration(models.Model):
    """One row: a counter that every write changing what discovery finds or counts bumps
    inside its transaction (registry/discovery/listings.py), so that a cached facet count is exact
    while the counter it was counted at is the current one (registry/discovery/facets.py)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return str(self.value)
