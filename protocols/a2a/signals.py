"""Signals the A2A app sends; extensions of A2A (the AAP app) receive them."""

from dataclasses import dataclass
from typing import Any

from django.dispatch import Signal

from registry.agents.models import Agent


@dataclass(frozen=True)
class StoredCard:
    """An agent's card as now stored (``card`` None: the agent no longer has one);
    ``created``: the agent is new, so nothing derived from an earlier card exists."""

    agent: Agent
    card: dict[str, Any] | None
    created: bool = False


# Sent inside the write's transaction after cards were stored, replaced or removed, one
# or many at once (bulk imports send them all in one): ``cards``, a list of StoredCard.
# Receivers index what they derive from cards in bulk.
card_stored = Signal()


def cards_stored_send(cards: list[StoredCard]) -> None:
    card_stored.send(sender=StoredCard, cards=cards)
