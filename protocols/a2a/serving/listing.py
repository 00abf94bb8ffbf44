"""An agent's card while it is not publicly listed (registry.agents.listing): its card and
versions keep their bytes, marked unlisted (``listed``, read by the card read itself), and
leave every process's card cache at once."""

import uuid
from collections.abc import Iterable

from protocols.a2a.cards.selectors import CARDS_CHANNEL, card_cache
from protocols.a2a.models import CardDocument, CardVersion
from registry.agents.models import Agent
from registry.fastpath.notices import announce


def _forget(agent_ids: list[uuid.UUID]) -> None:
    """Every process's cache forgets these agents' cards and versions once the write
    commits (a notice); this process's at once."""
    seqs = CardVersion.objects.filter(agent_id__in=agent_ids).values_list("agent_id", "seq")
    keys = [str(pk) for pk in agent_ids] + [f"{pk}@{seq}" for pk, seq in seqs]
    announce(CARDS_CHANNEL, keys)
    card_cache.forget(keys)


def cards_listed_set(agent: Agent, listed: bool) -> None:
    """The agent's card and versions served again, or not (receiver's work, inside the
    write's transaction)."""
    CardDocument.objects.filter(agent=agent).update(listed=listed)
    CardVersion.objects.filter(agent=agent).update(listed=listed)
    _forget([agent.pk])


def cards_listed_follow(agent_ids: Iterable[uuid.UUID]) -> None:
    """Cards and versions a write stored for agents that are not listed are not served
    (a write to an agent under review or in quarantine)."""
    ids = list(agent_ids)
    unlisted = list(Agent.objects.filter(pk__in=ids, listed=False).values_list("pk", flat=True))
    if not unlisted:
        return
    CardDocument.objects.filter(agent_id__in=unlisted, listed=True).update(listed=False)
    CardVersion.objects.filter(agent_id__in=unlisted, listed=True).update(listed=False)
    _forget(unlisted)
