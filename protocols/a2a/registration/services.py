"""Writes of the A2A app: register, replace and verify agents by their cards.

Every write stores the card document and its provenance and sends ``card_stored``
(protocols.a2a.signals) in the same transaction, so that extensions of A2A (AAP) index the card.
Native writes to agents reach this app through ``agent_changed`` (protocols.a2a.receivers).
"""

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from protocols.a2a.cards.formats import CardReport
from protocols.a2a.cards.mapping import card_facts, card_to_agent_input
from protocols.a2a.cards.signatures import SignatureResult
from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import AgentIdentity, CardDocument
from protocols.a2a.registration.bootstrap import card_resolve
from protocols.a2a.registration.provenance import (
    CardSource,
    card_signature_check,
    provenance_save,
    submitted_body,
)
from protocols.a2a.registration.txt_records import DiscoveryError
from protocols.a2a.signals import StoredCard, cards_stored_send
from protocols.a2a.versions.history import version_preview, version_record
from registry.agents import services as core
from registry.agents.claims import domain_claim_check
from registry.agents.concurrency import Precondition, agent_lock, checked
from registry.agents.holds import write_holdable
from registry.agents.models import Agent, Endpoint
from registry.agents.selectors import agent_queryset
from registry.agents.visibility import Asked, agent_visibility_change
from registry.discovery.facts import agent_facts_set
from registry.discovery.filter_keys import filter_keys_at_end
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.hosts import url_authority
from registry.signals import writes_batched

# The source of agents registered by card, and the writer name of this app's writes.
CARD_SOURCE = "a2a-card"
WRITER = "a2a"
# The kind of a card write that waits for review (registry.agents.holds).
HELD_CARD = "a2a-card"
# Fact kinds (registry.extensions) this app writes from a card, and from its provenance.
CARD_FACT_KINDS = (
    "protocolBinding",
    "protocolVersion",
    "provider",
    "extension",
    "securityScheme",
    "streaming",
    "pushNotifications",
    "specVersion",
)


def card_require_valid(card: Any) -> CardReport:
    report = card_validate(card)
    if not report.ok:
        first = report.errors[0]
        more = f" (and {len(report.errors) - 1} more)" if len(report.errors) > 1 else ""
        raise ProblemError(
            400,
            "invalid-card",
            f"The agent card is invalid: {first.path} {first.message}{more}.",
            report.errors,
            warnings=[w.as_dict() for w in report.warnings],
        )
    return report


def card_facts_save(agent: Agent, card: dict | None) -> None:
    agent_facts_set(
        agent=agent, kinds=CARD_FACT_KINDS, facts=card_facts(card) if card is not None else ()
    )


def _owner_changed(agent: Agent) -> ProblemError:
    return ProblemError(
        403,
        "forbidden",
        f"Agent {agent.id} has moved to another owner; this key may not change it.",
    )


def document_save(
    agent: Agent,
    body: bytes,
    *,
    origin: str,
    spec_version: str,
    naming: str,
    signed: bool,
    change: str = "update",
) -> CardDocument:
    """Store the agent's card document, and its next version when the bytes changed."""
    version_record(agent, body, change=change)
    card_facts_save(agent, json.loads(body))
    document, _ = CardDocument.objects.update_or_create(
        agent=agent,
        defaults={
            "body": body,
            "sha256": hashlib.sha256(body).hexdigest(),
            "origin": origin,
            "spec_version": spec_version,
            "naming": naming,
            "signed": signed,
        },
    )
    return document


def _submitted_save(
    agent: Agent, card: dict, report: CardReport, source: CardSource, *, change: str
) -> CardDocument:
    """Store a submitted card (``provenance.submitted_body``)."""
    return document_save(
        agent,
        submitted_body(agent, card, source),
        origin=CardDocument.Origin.SUBMITTED,
        spec_version=report.spec_version or "",
        naming=report.naming,
        signed=report.signed,
        change=change,
    )


@dataclass
class CardRegistration:
    agent: Agent
    report: CardReport
    created: bool
    source: CardSource
    signature: SignatureResult


def agent_register_card(
    *, owner: str, card: dict, source: CardSource | None = None, visibility: Asked = None
) -> CardRegistration:
    """Register a card, or update the owner's agent that has the same preferred interface URL.

    Identity is the owner plus the card's preferred interface URL, held by a unique
    constraint: of concurrent identical registrations one creates the agent, and the
    others, on the constraint, retry as updates. ``visibility`` is set in the same one.
    """
    source = source or CardSource()
    report = card_require_valid(card)
    signature = card_signature_check(card, source.verified_domain or None)
    data = card_to_agent_input(card, report.index_view)
    preferred = data.endpoints[0].address if data.endpoints else ""
    attempt = 0
    while True:
        try:
            # The agent's listing is built once, after the card, provenance and AAP status;
            # its filter keys once, after its capabilities, tags and facts (PostgreSQL).
            written, held = write_holdable(
                HELD_CARD,
                None,
                lambda: held_card_payload(card, source, "reregister", visibility),
                lambda: _card_register(
                    owner, card, report, data, preferred, source, signature, visibility
                ),
            )
            if held is not None:
                return CardRegistration(held.agent, report, False, source, signature)
            agent, created = written
            return CardRegistration(agent, report, created, source, signature)
        except IntegrityError:
            attempt += 1
            if attempt == 3:
                raise


def _card_register(
    owner, card, report, data, preferred, source, signature, visibility: Asked = None
) -> tuple[Agent, bool]:
    # The agent's listing is built once, after the card, provenance and AAP status; its
    # filter keys once, after its capabilities, tags and facts (PostgreSQL).
    with transaction.atomic(), filter_keys_at_end(), writes_batched():
        identity = (
            AgentIdentity.objects.select_for_update()
            .filter(owner=owner, preferred_url=preferred)
            .first()
        )
        if identity is None:
            agent = core.agent_create(owner=owner, data=data, source=CARD_SOURCE, writer=WRITER)
            AgentIdentity.objects.create(agent=agent, owner=owner, preferred_url=preferred)
        else:
            agent = agent_queryset().get(pk=identity.agent_id)
            if agent.owner != owner:
                raise _owner_changed(agent)
            _agent_card_apply(agent=agent, data=data)
        agent = agent_visibility_change(agent=agent, asked=visibility, created=identity is None)
        change = "register" if identity is None else "reregister"
        _submitted_save(agent, card, report, source, change=change)
        provenance_save(agent, source, signature)
        cards_stored_send([StoredCard(agent, card, created=identity is None)])
    return agent, identity is None


def held_card_payload(card: dict, source: CardSource, change: str, visibility: Asked = None):
    """A card write that waits for review, as JSON (``held_card_apply`` makes it), with
    the visibility it asked for (made with it)."""
    body = base64.b64encode(source.body).decode() if source.body is not None else None
    return {
        "card": card,
        "body": body,
        "verifiedDomain": source.verified_domain,
        "sourceUrl": source.source_url,
        "discoveryPath": source.discovery_path,
        "change": change,
        "visibility": visibility,
    }


def held_card_apply(agent: Agent, payload: dict) -> CardRegistration:
    """Make a card write that waited, once approved."""
    body = payload.get("body")
    source = CardSource(
        body=base64.b64decode(body) if body is not None else None,
        verified_domain=payload.get("verifiedDomain", ""),
        source_url=payload.get("sourceUrl", ""),
        discovery_path=payload.get("discoveryPath", "posted"),
    )
    return agent_replace_card(
        agent=agent,
        card=payload["card"],
        source=source,
        change=payload.get("change", "replace"),
        visibility=tuple(payload["visibility"]) if payload.get("visibility") else None,
    )


def agent_register_from_domain(
    *, owner: str, domain: str | None = None, url: str | None = None, visibility: Asked = None
) -> CardRegistration:
    """The discovery bootstrap: resolve the card from a domain or URL, then register it."""
    try:
        resolved = card_resolve(domain=domain, url=url)
    except DiscoveryError as exc:
        raise discovery_problem(exc, "domain" if domain is not None else "url") from None
    host = url_authority(resolved.source_url) or ""
    domain_claim_check(domain=host, owner=owner)
    origin_policy_apply(resolved, host)
    source = CardSource(
        body=resolved.body,
        verified_domain=host,
        source_url=resolved.source_url,
        discovery_path=resolved.path_used,
        origin_problems=resolved.origin_problems,
        attempts=resolved.attempts,
    )
    card = resolved.card
    return agent_register_card(owner=owner, card=card, source=source, visibility=visibility)


def origin_policy_apply(resolved, host: str) -> None:
    """A2A_ORIGIN_POLICY=reject: a card naming interfaces on other hosts than the domain
    that served it neither registers nor verifies."""
    if resolved.origin_problems and settings.A2A_ORIGIN_POLICY == "reject":
        raise ProblemError(
            422,
            "origin-mismatch",
            f"The card served by {host} names interfaces on other hosts.",
            resolved.origin_problems,
        )


def discovery_problem(exc: DiscoveryError, field_name: str) -> ProblemError:
    if exc.reason == "invalid-domain":
        return ProblemError(400, "validation-error", exc.detail, [Problem(field_name, exc.detail)])
    return ProblemError(
        422,
        "discovery-failed",
        exc.detail,
        [Problem(a.url, f"{a.outcome}: {a.detail}") for a in exc.attempts],
    )


def _name_free(name: str, protocol: str, taken: set[str]) -> str:
    """A name for an endpoint whose name a card interface took: name-<protocol>[-n], unused."""
    limit = Endpoint._meta.get_field("name").max_length
    candidate, counter = name, 1
    while candidate in taken:
        suffix = f"-{protocol.lower()}" + (f"-{counter}" if counter > 1 else "")
        candidate, counter = name[: limit - len(suffix)] + suffix, counter + 1
    taken.add(candidate)
    return candidate


def agent_replace_card(
    *,
    agent: Agent,
    card: dict,
    source: CardSource | None = None,
    precondition: Precondition | None = None,
    change: str = "replace",
    visibility: Asked = None,
) -> CardRegistration:
    """PUT /a2a/agents/<id>: the card becomes the agent's card (unverified until /verify).

    With ``source``, the card was fetched again from where the agent was registered (a
    probe's re-import): it keeps that provenance, and the bytes received are stored.
    """
    report = card_require_valid(card)
    source = source or CardSource()
    signature = card_signature_check(card, source.verified_domain or None)
    data = card_to_agent_input(card, report.index_view)
    preferred = data.endpoints[0].address if data.endpoints else ""

    def write() -> Agent:
        # The filter keys refreshed once, after the capabilities, tags and facts
        # (PostgreSQL); the agent locked (the checks above took time: it may have gone or
        # changed since).
        with transaction.atomic(), filter_keys_at_end(), writes_batched():
            locked = _replaceable(agent, precondition, preferred)
            _agent_card_apply(agent=locked, data=data)
            locked = agent_visibility_change(agent=locked, asked=visibility)
            AgentIdentity.objects.update_or_create(
                agent=locked, defaults={"owner": locked.owner, "preferred_url": preferred}
            )
            _submitted_save(locked, card, report, source, change=change)
            provenance_save(locked, source, signature)
            cards_stored_send([StoredCard(locked, card)])
        return locked

    written, held = write_holdable(
        HELD_CARD, agent, lambda: held_card_payload(card, source, change, visibility), write
    )
    return CardRegistration(held.agent if held else written, report, False, source, signature)


def _replaceable(agent: Agent, precondition: Precondition | None, preferred: str) -> Agent:
    """The agent locked, if writable, meeting ``precondition``, and no other agent of its
    owner has the card's preferred interface."""
    agent = checked(agent_lock(agent), precondition)
    taken = AgentIdentity.objects.filter(owner=agent.owner, preferred_url=preferred)
    if taken.exclude(agent=agent).exists():
        raise ProblemError(
            409,
            "duplicate-agent",
            f"Another agent of {agent.owner} already has the preferred interface {preferred}.",
            [Problem("supportedInterfaces[0].url", "is another agent's preferred interface")],
        )
    return agent


def agent_replace_card_preview(
    *,
    agent: Agent,
    card: dict,
    source: CardSource | None = None,
    precondition: Precondition | None = None,
) -> dict:
    """``agent_replace_card``'s dry run: the version it would store, or its refusal; nothing
    written (no signature fetched either: it decides no part of the answer)."""
    data = card_to_agent_input(card, card_require_valid(card).index_view)
    preferred = data.endpoints[0].address if data.endpoints else ""
    with transaction.atomic():
        agent = _replaceable(agent, precondition, preferred)
        return version_preview(agent, submitted_body(agent, card, source or CardSource()))


def _agent_card_apply(*, agent: Agent, data: core.AgentInput) -> None:
    """Make the model say what the card says; endpoints of other protocols stay."""
    card_names = {e.name for e in data.endpoints}
    kept = [e for e in agent.endpoints.all() if e.protocol != Endpoint.Protocol.A2A]
    taken = card_names | {e.name for e in kept}
    others = [
        core.EndpointInput(
            name=_name_free(e.name, e.protocol, taken) if e.name in card_names else e.name,
            transport=e.transport,
            protocol=e.protocol,
            address=e.address,
            liveness_model=e.liveness_model,
            heartbeat_interval_seconds=e.heartbeat_interval_seconds,
            ttl_seconds=e.ttl_seconds,
            protocol_metadata=e.protocol_metadata,
        )
        for e in kept
    ]
    core.agent_update(
        agent=agent,
        name=data.name,
        description=data.description,
        version=data.version,
        capabilities=data.capabilities,
        endpoints=data.endpoints + others,
        source=CARD_SOURCE,
        writer=WRITER,
        audit_action="agent.replace-card",
    )
