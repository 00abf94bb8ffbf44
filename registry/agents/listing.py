"""Publicly listed or not: ``Agent.listed``, the one gate every public read honours.

Public reads filter on the agent's own column (``selectors.agent_discoverable_queryset``,
the card's row, the catalog's entry), never on a join, so the gate costs the hot paths
nothing. Two things decide it: moderation's review and quarantine (``Agent.admitted``,
``agent_admitted_set``) and the agent's visibility (registry.agents.visibility): listed
is admitted and public (``listed_of``), so moderation releasing a private agent leaves it
unlisted. ``listing_apply`` withdraws the agent as retirement does, and undoes it:

- its searchable text goes (text search and the lean lane's tiers read only agents with
  one), and comes back when it is listed again; an unlisted agent's words are kept apart
  (``UnlistedSearchText``), for the callers who may read it, whose text search alone
  matches them (registry.discovery.search);
- a tombstone: the change feed shows it as deleted, and search by meaning drops its vector
  (registry.semantic.index); listed again, the tombstone goes (a retired agent's stays)
  and its vector, written again, is read back;
- the filter keys' ``discoverable`` (PostgreSQL's trigger reads ``listed``);
- ``agent_listing_changed``: the apps withdraw or restore what they serve (the card, its
  versions and every process's card cache; the catalog entry; public events);
- ``agents_written``: its listing, the data generation (so cached pages and counts) and
  its events follow.
"""

from django.utils import timezone

from registry.agents.models import Agent, AgentSearchText, Capability, Tombstone
from registry.agents.text import search_keys_build, search_text_build, unlisted_words_build
from registry.agents.unlisted_text import UnlistedSearchText
from registry.signals import agent_listing_changed, agents_written_send


def search_text(agent: Agent, capabilities: list[Capability]) -> AgentSearchText:
    return AgentSearchText(
        agent=agent,
        text=search_text_build(agent.name, agent.description, capabilities),
        keys=search_keys_build(agent.name, capabilities),
    )


def unlisted_text(agent: Agent, capabilities: list[Capability]) -> UnlistedSearchText:
    columns = unlisted_words_build(agent.name, agent.description, capabilities)
    return UnlistedSearchText(agent=agent, **columns)


def search_text_refresh(agent: Agent) -> None:
    """The agent's searchable text as it is now: a listed agent's indexed text, an
    unlisted one's words (``UnlistedSearchText``), a retired one's none."""
    if agent.status == Agent.Status.RETIRED:
        search_text_drop(agent)
        return
    # Read afresh: a prefetched agent.capabilities would be the list before this write.
    capabilities = list(Capability.objects.filter(agent=agent).order_by("position"))
    if not agent.listed:
        AgentSearchText.objects.filter(agent=agent).delete()
        row = unlisted_text(agent, capabilities)
        UnlistedSearchText.objects.update_or_create(
            agent=agent, defaults={"words": row.words, "names": row.names, "titles": row.titles}
        )
        return
    # (A listed agent's words apart went when it was listed: listing_apply.)
    row = search_text(agent, capabilities)
    AgentSearchText.objects.update_or_create(
        agent=agent, defaults={"text": row.text, "keys": row.keys}
    )


def search_text_drop(agent: Agent) -> None:
    """No text search finds the agent any more (retired)."""
    AgentSearchText.objects.filter(agent=agent).delete()
    UnlistedSearchText.objects.filter(agent=agent).delete()


def listed_of(agent: Agent) -> bool:
    """Whether the agent is publicly listed: moderation admits it and its visibility is
    public (registry.agents.visibility). The only rule that sets ``Agent.listed``."""
    return agent.admitted and agent.visibility == Agent.Visibility.PUBLIC


def agent_admitted_set(*, agent: Agent, admitted: bool) -> bool:
    """Moderation's decision (its row locked by the caller, inside its transaction): the
    agent is listed again only if its visibility is public too; whether its listing
    changed. The caller audits why."""
    if agent.admitted != admitted:
        agent.admitted = admitted
        agent.save(update_fields=["admitted", "updated_at"])
    return listing_apply(agent)


def listing_apply(agent: Agent, *, created: bool = False) -> bool:
    """List or unlist the agent as ``listed_of`` says (its row locked by the caller, inside
    its transaction); whether anything changed. ``created``: the agent is new in this
    transaction, never public: unlisted, it leaves no tombstone (which would tell a
    mirror that it exists)."""
    listed = listed_of(agent)
    if agent.listed == listed:
        return False
    agent.listed = listed
    agent.save(update_fields=["listed", "updated_at"])
    retired = agent.status == Agent.Status.RETIRED  # its tombstone is for ever
    if listed:
        UnlistedSearchText.objects.filter(agent=agent).delete()
    search_text_refresh(agent)  # (a retired agent's: none)
    if listed:
        if not retired:
            Tombstone.objects.filter(agent_id=agent.pk).delete()
    elif not retired and not created:
        tombstone_record(agent.pk, agent.owner, public=True)
    agent_listing_changed.send(sender=Agent, agent=agent, listed=listed)
    agents_written_send([agent.pk])
    return True


def tombstone_record(agent_id, owner: str, *, public: bool) -> None:
    """The agent's tombstone, dated now: its deletion in the change feed. ``public``: the
    public feed shows it (the agent was publicly listed); a tombstone the public feed
    already shows stays in it. Else it is only for those who may read the agent
    (``Tombstone.public``): a restricted agent's deletion tells no one else it existed."""
    shown = Tombstone.objects.filter(agent_id=agent_id, public=True).exists()
    Tombstone.objects.update_or_create(
        agent_id=agent_id,
        defaults={"owner": owner, "deleted_at": timezone.now(), "public": public or shown},
    )


def agents_admitted_set(agent_ids, *, admitted: bool) -> list:
    """``agent_admitted_set`` for many agents (a block entry's quarantine), each row
    locked; the ids whose listing changed."""
    changed = []
    rows = Agent.objects.select_for_update().filter(pk__in=list(agent_ids)).order_by("pk")
    for agent in rows:
        if agent_admitted_set(agent=agent, admitted=admitted):
            changed.append(agent.pk)
    return changed
