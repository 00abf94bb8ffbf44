"""The agents' stored card documents as the receivers of one ``agents_written`` read them:
once for all of them (the catalog entries, the texts embedded for search by meaning), and
not at all for the cards a bulk import offered as it stored them (``cards_offer``)."""

import json
import uuid
from collections.abc import Iterable
from typing import Any, NamedTuple

from protocols.a2a.models import CardDocument
from registry.signals import dispatch_shared, documents_offer

# The name of the cards among the documents a write offers (registry.signals).
CARDS = "a2a.cards"


class StoredDocument(NamedTuple):
    sha256: str
    origin: str  # CardDocument.Origin
    card: Any  # the body decoded, None when it is not JSON; never changed by its readers


def cards_offer(documents: dict[uuid.UUID, StoredDocument]) -> None:
    """Inside ``writes_batched()``: these agents' documents as just stored, their cards the
    decoded bodies (what a read would give)."""
    documents_offer(CARDS, documents)


def cards_stored(agent_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, StoredDocument]:
    """The card documents of the agents of ``agent_ids`` (UUIDs, or their text) that have
    one, by UUID. While ``agents_written`` is sent, read once for all of its receivers (and
    not read for the cards the write offered)."""
    ids = list(
        dict.fromkeys(pk if isinstance(pk, uuid.UUID) else uuid.UUID(str(pk)) for pk in agent_ids)
    )
    shared = dispatch_shared()
    known: dict = {} if shared is None else shared["documents"].setdefault(CARDS, {})
    missing = [pk for pk in ids if pk not in known]
    if missing:
        known.update(dict.fromkeys(missing))  # no document: None
        rows = CardDocument.objects.filter(agent_id__in=missing).values_list(
            "agent_id", "sha256", "origin", "body"
        )
        for agent_id, sha256, origin, body in rows:
            try:
                card = json.loads(bytes(body))
            except ValueError:
                card = None
            known[agent_id] = StoredDocument(sha256, origin, card)
    return {pk: known[pk] for pk in ids if known[pk] is not None}
