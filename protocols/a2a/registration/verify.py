"""Verification of a registered card against its domain: the card the domain serves must be
the agent's (``POST /a2a/agents/<id>/verify``)."""

import json

from django.db import transaction

from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import CardDocument, CardProvenance
from protocols.a2a.registration.bootstrap import card_resolve
from protocols.a2a.registration.provenance import (
    CardSource,
    card_preferred_url,
    card_signature_check,
    provenance_save,
)
from protocols.a2a.registration.services import (
    CardRegistration,
    discovery_problem,
    origin_policy_apply,
)
from protocols.a2a.registration.txt_records import DiscoveryError
from registry.agents.claims import domain_claim_check
from registry.agents.concurrency import agent_lock
from registry.agents.models import Agent
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.hosts import url_authority


def agent_verify(*, agent: Agent, domain: str | None = None) -> CardRegistration:
    """Fetch the card from the agent's domain; it is verified if the domain serves this card."""
    document = CardDocument.objects.filter(agent=agent).first()
    if document is None or document.origin != CardDocument.Origin.SUBMITTED:
        raise ProblemError(
            409,
            "not-verifiable",
            "Only an agent registered by its card can be verified against its domain.",
        )
    stored = json.loads(bytes(document.body))
    provenance = CardProvenance.objects.filter(agent=agent).first()
    domain = (
        domain
        or (provenance.verified_domain if provenance else "")
        or url_authority(card_preferred_url(stored))
    )
    try:
        resolved = card_resolve(domain=domain)
    except DiscoveryError as exc:
        raise discovery_problem(exc, "domain") from None
    if resolved.card != stored:
        differing = sorted(
            key
            for key in set(stored) | set(resolved.card)
            if stored.get(key) != resolved.card.get(key)
        )
        raise ProblemError(
            409,
            "card-mismatch",
            f"The card served at {resolved.source_url} differs from the registered card; "
            f"register the served card (PUT /a2a/agents/{agent.id}) or publish this one.",
            [Problem(key, "differs from the served card") for key in differing],
        )
    # Verifying is registering from the domain: a domain another owner proved is theirs
    # vouches for none of this owner's cards.
    domain_claim_check(domain=url_authority(resolved.source_url) or "", owner=agent.owner)
    origin_policy_apply(resolved, url_authority(resolved.source_url) or "")
    signature = card_signature_check(stored, url_authority(resolved.source_url))
    source = CardSource(
        verified_domain=url_authority(resolved.source_url) or "",
        source_url=resolved.source_url,
        discovery_path=resolved.path_used,
        origin_problems=resolved.origin_problems,
        attempts=resolved.attempts,
    )
    with transaction.atomic():
        # The fetches took time: the agent must still be there, with this very card.
        agent = agent_lock(agent)
        current = CardDocument.objects.filter(agent=agent).values_list("body", flat=True).first()
        if current is None or json.loads(bytes(current)) != stored:
            raise ProblemError(
                409,
                "conflict",
                "The agent's card changed while it was being verified; nothing was changed.",
            )
        provenance_save(agent, source, signature)
    report = card_validate(stored)
    return CardRegistration(agent, report, False, source, signature)
