"""Writes of the A2A app: register and replace agents by card, keep card documents current."""

import hashlib
import json
from typing import Any

from django.db import transaction
from django.dispatch import receiver

from a2a.mapping import card_generate, card_to_agent_input
from a2a.models import CardDocument
from a2a.validation import CardReport, card_validate
from aap.services import aap_status_clear, aap_status_refresh
from registry import services as core
from registry.jsonutil import Problem, canonical_dumps
from registry.models import Agent, Endpoint
from registry.problems import ProblemError
from registry.selectors import agent_queryset
from registry.signals import agent_changed


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


def _document_save(
    agent: Agent, body: bytes, *, origin: str, spec_version: str, naming: str, signed: bool
) -> CardDocument:
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


def _submitted_save(agent: Agent, card: dict, report: CardReport) -> CardDocument:
    return _document_save(
        agent,
        canonical_dumps(card),
        origin=CardDocument.Origin.SUBMITTED,
        spec_version=report.spec_version or "",
        naming=report.naming,
        signed=report.signed,
    )


@transaction.atomic
def agent_register_card(*, owner: str, card: dict, base_url: str) -> tuple[Agent, CardReport]:
    report = card_require_valid(card)
    agent = core.agent_create(
        owner=owner,
        data=card_to_agent_input(card),
        source=Agent.Source.A2A_CARD,
        base_url=base_url,
    )
    _submitted_save(agent, card, report)
    aap_status_refresh(agent=agent, card=card)
    return agent, report


def _name_free(name: str, protocol: str, taken: set[str]) -> str:
    """A name for an endpoint whose name a card interface took: name-<protocol>[-n], unused."""
    limit = Endpoint._meta.get_field("name").max_length
    candidate, counter = name, 1
    while candidate in taken:
        suffix = f"-{protocol.lower()}" + (f"-{counter}" if counter > 1 else "")
        candidate, counter = name[: limit - len(suffix)] + suffix, counter + 1
    taken.add(candidate)
    return candidate


@transaction.atomic
def agent_replace_card(*, agent: Agent, card: dict, base_url: str) -> tuple[Agent, CardReport]:
    """The card becomes the agent's card; endpoints of other protocols stay."""
    report = card_require_valid(card)
    data = card_to_agent_input(card)
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
        base_url=base_url,
        name=data.name,
        description=data.description,
        version=data.version,
        capabilities=data.capabilities,
        endpoints=data.endpoints + others,
        source=Agent.Source.A2A_CARD,
        via_card=True,
    )
    _submitted_save(agent, card, report)
    aap_status_refresh(agent=agent, card=card)
    return agent, report


def _card_managed_update(agent: Agent, document: CardDocument, changed: set[str]) -> None:
    """A native change to a card-registered agent: only top-level text, only if unsigned."""
    if changed & {"capabilities", "a2a-endpoints"}:
        raise ProblemError(
            409,
            "card-managed",
            "This agent was registered by its A2A card: its skills and A2A interfaces come "
            f"from the card. Send the new card with PUT /a2a/agents/{agent.id}.",
        )
    fields = changed & {"name", "description", "version"}
    if not fields:
        return
    if document.signed:
        raise ProblemError(
            409,
            "card-managed",
            "This agent's card is signed, so the registry cannot change it. Sign and send the "
            f"new card with PUT /a2a/agents/{agent.id}.",
            [Problem(name, "is fixed by the signed card") for name in sorted(fields)],
        )
    card = json.loads(bytes(document.body))
    for name in fields:
        card[name] = getattr(agent, name)
    document.body = canonical_dumps(card)
    document.sha256 = hashlib.sha256(document.body).hexdigest()
    document.save(update_fields=["body", "sha256", "updated_at"])
    aap_status_refresh(agent=agent, card=card)


def card_generated_refresh(agent: Agent, base_url: str) -> None:
    """Store the generated card of a native agent, or remove it when it has no A2A endpoint."""
    agent = agent_queryset().get(pk=agent.pk)
    card = card_generate(agent, base_url)
    if card is None:
        CardDocument.objects.filter(agent=agent).delete()
        aap_status_clear(agent=agent)
        return
    report = card_validate(card)
    # The registry vouches for its own queue URLs, whatever its base URL's scheme.
    own = {
        f"supportedInterfaces[{index}].url"
        for index, iface in enumerate(card["supportedInterfaces"])
        if iface["url"].startswith(f"{base_url}/a2a/queue/")
    }
    errors = [p for p in report.errors if p.path not in own]
    if errors:
        raise ProblemError(
            400,
            "invalid-card",
            "The A2A card built from this agent would be invalid; fix the A2A endpoint's "
            "address or protocolMetadata.",
            [Problem(f"generatedCard.{p.path}", p.message) for p in errors],
        )
    _document_save(
        agent,
        canonical_dumps(card),
        origin=CardDocument.Origin.GENERATED,
        spec_version=report.spec_version or "1.0",
        naming=report.naming,
        signed=False,
    )
    # A generated card is an AAP dealer's only if its protocolMetadata declares the extension.
    aap_status_refresh(agent=agent, card=card)


@receiver(agent_changed, dispatch_uid="a2a-card-documents")
def on_agent_changed(
    sender, agent: Agent, changed: set[str], via_card: bool, base_url: str, **kwargs
) -> None:
    if via_card:
        return  # the card service stores the submitted document itself
    document = CardDocument.objects.filter(agent=agent).first()
    if document is not None and document.origin == CardDocument.Origin.SUBMITTED:
        _card_managed_update(agent, document, changed)
        return
    card_generated_refresh(agent, base_url)
