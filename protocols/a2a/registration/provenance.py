"""Where an agent's card came from and whether it is signed by its publisher: the card's
provenance, its trust facts (``verified``, ``signed``) and signature checks, at
registration and again later (keys rotate and are revoked)."""

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from protocols.a2a.cards.mapping import card_to_agent_input
from protocols.a2a.cards.signatures import SignatureResult, card_signature_verify
from protocols.a2a.models import CardDocument, CardProvenance
from registry.agents.models import Agent
from registry.discovery.facts import agent_facts_set
from registry.events.envelope import SIGNATURE_CHANGED
from registry.events.outbox import event_add
from registry.http.jsonutil import Problem, canonical_dumps, json_equal
from registry.outbound.hosts import url_authority
from registry.signals import agents_written_send

# Fact kinds (registry.extensions) this module writes from a card's provenance.
TRUST_FACT_KINDS = ("verified", "signed")


@dataclass
class CardSource:
    """How the registry came by a card: posted, or fetched from a domain that served it."""

    body: bytes | None = None
    verified_domain: str = ""
    source_url: str = ""
    discovery_path: str = "posted"
    origin_problems: list[Problem] = field(default_factory=list)
    attempts: list[Any] = field(default_factory=list)
    # Sent through a face whose client may not keep the card's text (a2a-sdk writes a data
    # part's members in its own order and numbers as doubles; MCP's arguments arrive parsed):
    # a card equal as JSON to the agent's stored one keeps the stored bytes, so no version.
    equal_kept: bool = False


def submitted_body(agent: Agent | None, card: dict, source: CardSource) -> bytes:
    """The bytes stored for a submitted card: those received when there are any (a body
    fetched, a card's text as an A2A request carried it), else the object as sent
    (``canonical_dumps``: its members' order, its numbers as written)."""
    if source.equal_kept and agent is not None:
        stored = CardDocument.objects.filter(agent=agent).values_list("body", flat=True).first()
        if stored is not None and json_equal(json.loads(bytes(stored)), card):
            return bytes(stored)
    if source.body is not None:
        return source.body.removeprefix(b"\xef\xbb\xbf")
    return canonical_dumps(card)


def card_preferred_url(card: dict) -> str:
    endpoints = card_to_agent_input(card).endpoints
    return endpoints[0].address if endpoints else ""


def card_signature_check(card: dict, domain: str | None) -> SignatureResult:
    """Verify the card's signatures (network: the JWKS), outside any transaction.

    Without ``domain``, keys are looked for on the host of the card's preferred interface;
    an unsigned card is answered without parsing it again.
    """
    if not card.get("signatures"):
        return SignatureResult("unsigned", "The card carries no signatures.")
    return card_signature_verify(card, domain=domain or url_authority(card_preferred_url(card)))


def provenance_save(agent: Agent, source: CardSource, signature: SignatureResult) -> CardProvenance:
    now = timezone.now()
    before = CardProvenance.objects.filter(agent=agent).values_list("signature", flat=True)
    _signature_event(agent.pk, before.first(), signature.status)
    provenance, _ = CardProvenance.objects.update_or_create(
        agent=agent,
        defaults={
            "verified_domain": source.verified_domain,
            "verified_at": now if source.verified_domain else None,
            "source_url": source.source_url,
            "discovery_path": source.discovery_path,
            "origin_problems": [p.as_dict() for p in source.origin_problems],
            "signature": signature.status,
            "signature_detail": signature.detail[:2000],
            "signature_kid": (signature.kid or "")[:200],
            "signature_checked_at": now,
            # A card fetched from its source is refreshed from there
            # (protocols.a2a.registration.refresh).
            "next_refresh_at": (
                now + timedelta(seconds=settings.AGENT_REFRESH_INTERVAL_SECONDS)
                if source.source_url
                else None
            ),
        },
    )
    trust_facts_save(agent, provenance)
    agents_written_send([agent.pk])  # the agent JSON's trust
    return provenance


def trust_facts(provenance: CardProvenance) -> set[tuple[str, str]]:
    """The trust facts of a card's provenance: a verified domain, a verified signature."""
    facts = set()
    if provenance.verified_domain:
        facts.add(("verified", "true"))
    if provenance.signature == "verified":
        facts.add(("signed", "true"))
    return facts


def trust_facts_save(agent: Agent, provenance: CardProvenance | None) -> None:
    agent_facts_set(
        agent=agent,
        kinds=TRUST_FACT_KINDS,
        facts=trust_facts(provenance) if provenance is not None else (),
    )


def signatures_recheck() -> dict[str, int]:
    """Verify every signed card again against its publisher's current keys and store the
    outcome (provenance and the ``signed`` fact); returns how many cards ended in each
    status. The key sets are fetched outside any transaction."""
    counts: dict[str, int] = {}
    documents = CardDocument.objects.filter(signed=True).only("agent_id", "body")
    for document in documents.order_by("agent_id").iterator(chunk_size=200):
        provenance = CardProvenance.objects.filter(agent_id=document.agent_id).first()
        if provenance is None:
            continue
        card = json.loads(bytes(document.body))
        signature = card_signature_check(card, provenance.verified_domain or None)
        with transaction.atomic():
            provenance = CardProvenance.objects.select_for_update().get(pk=provenance.pk)
            _signature_store(provenance, signature)
            trust_facts_save(Agent(pk=document.agent_id), provenance)
            agents_written_send([document.agent_id])
        counts[signature.status] = counts.get(signature.status, 0) + 1
    return counts


def _signature_event(agent_id, before: str | None, after: str) -> None:
    """``card.signature_changed`` when a stored card's signature status moves (a new card
    that is signed counts too); written by the write's agents_written, with the listing."""
    if before != after and (before is not None or after != "unsigned"):
        event_add(agent_id, SIGNATURE_CHANGED, signature=after)


def _signature_store(provenance: CardProvenance, signature: SignatureResult) -> None:
    _signature_event(provenance.agent_id, provenance.signature, signature.status)
    provenance.signature = signature.status
    provenance.signature_detail = signature.detail[:2000]
    provenance.signature_kid = (signature.kid or "")[:200]
    provenance.signature_checked_at = timezone.now()
    provenance.save(
        update_fields=["signature", "signature_detail", "signature_kid", "signature_checked_at"]
    )
