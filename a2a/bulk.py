"""Bulk card import: many cards in one transaction (imports, crawls, benchmarks)."""

import hashlib

from django.db import transaction
from django.utils import timezone

from a2a.mapping import card_facts, card_to_agent_input
from a2a.models import AgentIdentity, CardDocument, CardProvenance
from a2a.provenance import card_signature_check, trust_facts
from a2a.services import CARD_SOURCE, WRITER
from a2a.signals import StoredCard, cards_stored_send
from a2a.signatures import SignatureResult
from a2a.validation import card_validate
from a2a.versions import version_rows
from registry.agents import services as core
from registry.discovery.facts import facts_rows
from registry.fastpath.copy import objects_insert
from registry.http.jsonutil import Problem, canonical_dumps
from registry.http.problems import ProblemError
from registry.signals import writes_batched


def cards_bulk_import(*, owner: str, cards: list[dict]) -> int:
    """Register many cards with bulk inserts, through the core's bulk service (the same
    rows, change signals and audit entries as one by one), and send ``card_stored`` once
    for all of them.

    Every card is validated first: one invalid card refuses the batch. Cards whose owner and
    preferred interface URL an agent already has, or that repeat one earlier in the batch,
    are skipped. Signed cards are verified one by one (that needs their JWKS). Returns the
    number of agents created.
    """
    prepared = []
    for index, card in enumerate(cards):
        report = card_validate(card)
        if not report.ok:
            raise ProblemError(
                400,
                "invalid-card",
                f"Card {index} is invalid: {report.errors[0].path} {report.errors[0].message}.",
                [Problem(f"cards[{index}].{p.path}", p.message) for p in report.errors],
            )
        data = card_to_agent_input(card, report.index_view)
        preferred = data.endpoints[0].address if data.endpoints else ""
        prepared.append((card, report, data, preferred))
    taken = set(
        AgentIdentity.objects.filter(
            owner=owner, preferred_url__in=[p[3] for p in prepared]
        ).values_list("preferred_url", flat=True)
    )
    fresh = []
    for entry in prepared:
        if entry[3] not in taken:
            taken.add(entry[3])
            fresh.append(entry)
    signatures = [
        card_signature_check(card, None)
        if report.signed
        else SignatureResult("unsigned", "The card carries no signatures.")
        for card, report, _, _ in fresh
    ]
    # Every listing is built once, in bulk, after the cards, provenances and AAP statuses.
    with transaction.atomic(), writes_batched():
        agents = core.agents_bulk_create(
            owner=owner, items=[data for _, _, data, _ in fresh], source=CARD_SOURCE, writer=WRITER
        )
        documents, versions, provenances, identities, facts = [], [], [], [], []
        now = timezone.now()
        for agent, (card, report, _, preferred), signature in zip(
            agents, fresh, signatures, strict=True
        ):
            body = canonical_dumps(card)
            documents.append(
                CardDocument(
                    agent=agent,
                    body=body,
                    sha256=hashlib.sha256(body).hexdigest(),
                    origin=CardDocument.Origin.SUBMITTED,
                    spec_version=report.spec_version or "",
                    naming=report.naming,
                    signed=report.signed,
                )
            )
            versions.append(version_rows(agent, body, change="import", at=now))
            provenance = CardProvenance(
                agent=agent,
                discovery_path="import",
                signature=signature.status,
                signature_detail=signature.detail[:2000],
                signature_kid=(signature.kid or "")[:200],
                signature_checked_at=now,
            )
            provenances.append(provenance)
            identities.append(AgentIdentity(agent=agent, owner=owner, preferred_url=preferred))
            facts += facts_rows(
                agent, card_facts(card, report.index_view) | trust_facts(provenance)
            )
        for rows in (documents, versions, provenances, identities, facts):
            objects_insert(rows)
        cards_stored_send(
            [
                StoredCard(agent, card, created=True)
                for agent, (card, _, _, _) in zip(agents, fresh, strict=True)
            ]
        )
    return len(agents)
