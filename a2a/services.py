"""Writes of the A2A app: register and replace agents by card, keep card documents current."""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.dispatch import receiver
from django.utils import timezone

from a2a.discovery import DiscoveryError, card_resolve
from a2a.mapping import card_generate, card_to_agent_input
from a2a.models import AgentIdentity, CardDocument, CardProvenance
from a2a.signatures import SignatureResult, card_signature_verify
from a2a.validation import CardReport, card_classify, card_get, card_index_view, card_validate
from aap.models import AAPSkill, AAPStatus
from aap.services import aap_status_clear, aap_status_of, aap_status_refresh
from registry import services as core
from registry.audit import audit_record
from registry.discovery import CARD_FACETS
from registry.jsonutil import Problem, canonical_dumps
from registry.models import (
    Agent,
    AgentFacet,
    AgentSearchText,
    Capability,
    CapabilityTag,
    Endpoint,
)
from registry.problems import ProblemError
from registry.search import search_keys_build, search_text_build
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


# 1.0 security scheme wrappers and the scheme types they stand for (0.3 ``type`` values).
SCHEME_TYPES = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}


def card_facets(card: dict, view: dict | None = None) -> set[tuple[str, str]]:
    """The indexed facts of a card that discovery filters and counts by."""
    view = view if view is not None else card_index_view(card)
    facts: set[tuple[str, str]] = {("specVersion", card_classify(card) or "")}
    for iface in view.get("supportedInterfaces", []):
        facts.add(("protocolBinding", iface.get("protocolBinding", "")))
        facts.add(("protocolVersion", iface.get("protocolVersion", "")))
    organization = (view.get("provider") or {}).get("organization")
    if organization:
        facts.add(("provider", organization))
    capabilities = view.get("capabilities") or {}
    facts.add(("streaming", "true" if capabilities.get("streaming") else "false"))
    facts.add(("pushNotifications", "true" if capabilities.get("pushNotifications") else "false"))
    for extension in capabilities.get("extensions", []):
        if extension.get("uri"):
            facts.add(("extension", extension["uri"]))
    raw_schemes = card_get(card, "securitySchemes") or {}
    for name, scheme in (view.get("securitySchemes") or {}).items():
        kinds = [SCHEME_TYPES[k] for k in scheme if k in SCHEME_TYPES]
        raw = raw_schemes.get(name) if isinstance(raw_schemes, dict) else None
        if not kinds and isinstance(raw, dict) and isinstance(raw.get("type"), str):
            kinds = [raw["type"]]
        facts.update(("securityScheme", kind) for kind in kinds)
    return {(kind, value[:300]) for kind, value in facts if value}


def _facets_save(agent: Agent, card: dict | None) -> None:
    AgentFacet.objects.filter(agent=agent, kind__in=CARD_FACETS).delete()
    if card is not None:
        AgentFacet.objects.bulk_create(
            AgentFacet(agent=agent, kind=kind, value=value)
            for kind, value in sorted(card_facets(card))
        )


def _document_save(
    agent: Agent, body: bytes, *, origin: str, spec_version: str, naming: str, signed: bool
) -> CardDocument:
    _facets_save(agent, json.loads(body))
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
    agent: Agent, card: dict, report: CardReport, body: bytes | None = None
) -> CardDocument:
    """Store a submitted card: the bytes received when there are any, else the object as sent."""
    return _document_save(
        agent,
        body.removeprefix(b"\xef\xbb\xbf") if body is not None else canonical_dumps(card),
        origin=CardDocument.Origin.SUBMITTED,
        spec_version=report.spec_version or "",
        naming=report.naming,
        signed=report.signed,
    )


@dataclass
class CardSource:
    """How the registry came by a card: posted, or fetched from a domain that served it."""

    body: bytes | None = None
    verified_domain: str = ""
    source_url: str = ""
    discovery_path: str = "posted"
    origin_problems: list[Problem] = field(default_factory=list)
    attempts: list[Any] = field(default_factory=list)


@dataclass
class CardRegistration:
    agent: Agent
    report: CardReport
    created: bool
    source: CardSource
    signature: SignatureResult


def card_preferred_url(card: dict) -> str:
    endpoints = card_to_agent_input(card).endpoints
    return endpoints[0].address if endpoints else ""


def _url_authority(url: str) -> str | None:
    """host[:port] of a URL (the port only when not 443): the domain a card belongs to."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port and port != 443 else host


def card_signature_check(card: dict, domain: str | None) -> SignatureResult:
    """Verify the card's signatures (network: the JWKS), outside any transaction.

    Without ``domain``, keys are looked for on the host of the card's preferred interface;
    an unsigned card is answered without parsing it again.
    """
    if not card.get("signatures"):
        return SignatureResult("unsigned", "The card carries no signatures.")
    return card_signature_verify(card, domain=domain or _url_authority(card_preferred_url(card)))


def _provenance_save(
    agent: Agent, source: CardSource, signature: SignatureResult
) -> CardProvenance:
    now = timezone.now()
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
        },
    )
    return provenance


def agent_register_card(
    *, owner: str, card: dict, base_url: str, source: CardSource | None = None
) -> CardRegistration:
    """Register a card, or update the owner's agent that has the same preferred interface URL.

    Identity is the owner plus the card's preferred interface URL, held by a unique
    constraint: of concurrent identical registrations one creates the agent, and the
    others, on the constraint, retry as updates.
    """
    source = source or CardSource()
    report = card_require_valid(card)
    signature = card_signature_check(card, source.verified_domain or None)
    data = card_to_agent_input(card, report.index_view)
    preferred = data.endpoints[0].address if data.endpoints else ""
    attempt = 0
    while True:
        try:
            with transaction.atomic():
                identity = (
                    AgentIdentity.objects.select_for_update()
                    .filter(owner=owner, preferred_url=preferred)
                    .first()
                )
                if identity is None:
                    agent = core.agent_create(
                        owner=owner,
                        data=data,
                        source=Agent.Source.A2A_CARD,
                        base_url=base_url,
                    )
                    AgentIdentity.objects.create(agent=agent, owner=owner, preferred_url=preferred)
                else:
                    agent = agent_queryset().get(pk=identity.agent_id)
                    _agent_card_apply(agent=agent, data=data, base_url=base_url)
                _submitted_save(agent, card, report, source.body)
                _provenance_save(agent, source, signature)
                aap_status_refresh(agent=agent, card=card)
            return CardRegistration(agent, report, identity is None, source, signature)
        except IntegrityError:
            attempt += 1
            if attempt == 3:
                raise


def agent_register_from_domain(
    *, owner: str, base_url: str, domain: str | None = None, url: str | None = None
) -> CardRegistration:
    """The discovery bootstrap: resolve the card from a domain or URL, then register it."""
    try:
        resolved = card_resolve(domain=domain, url=url)
    except DiscoveryError as exc:
        raise discovery_problem(exc, "domain" if domain is not None else "url") from None
    host = _url_authority(resolved.source_url) or ""
    if resolved.origin_problems and settings.A2A_ORIGIN_POLICY == "reject":
        raise ProblemError(
            422,
            "origin-mismatch",
            f"The card served by {host} names interfaces on other hosts.",
            resolved.origin_problems,
        )
    source = CardSource(
        body=resolved.body,
        verified_domain=host,
        source_url=resolved.source_url,
        discovery_path=resolved.path_used,
        origin_problems=resolved.origin_problems,
        attempts=resolved.attempts,
    )
    return agent_register_card(owner=owner, card=resolved.card, base_url=base_url, source=source)


def discovery_problem(exc: DiscoveryError, field_name: str) -> ProblemError:
    if exc.reason == "invalid-domain":
        return ProblemError(400, "validation-error", exc.detail, [Problem(field_name, exc.detail)])
    return ProblemError(
        422,
        "discovery-failed",
        exc.detail,
        [Problem(a.url, f"{a.outcome}: {a.detail}") for a in exc.attempts],
    )


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
        or _url_authority(card_preferred_url(stored))
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
    signature = card_signature_check(stored, _url_authority(resolved.source_url))
    source = CardSource(
        verified_domain=_url_authority(resolved.source_url) or "",
        source_url=resolved.source_url,
        discovery_path=resolved.path_used,
        origin_problems=resolved.origin_problems,
        attempts=resolved.attempts,
    )
    _provenance_save(agent, source, signature)
    report = card_validate(stored)
    return CardRegistration(agent, report, False, source, signature)


def _name_free(name: str, protocol: str, taken: set[str]) -> str:
    """A name for an endpoint whose name a card interface took: name-<protocol>[-n], unused."""
    limit = Endpoint._meta.get_field("name").max_length
    candidate, counter = name, 1
    while candidate in taken:
        suffix = f"-{protocol.lower()}" + (f"-{counter}" if counter > 1 else "")
        candidate, counter = name[: limit - len(suffix)] + suffix, counter + 1
    taken.add(candidate)
    return candidate


def agent_replace_card(*, agent: Agent, card: dict, base_url: str) -> CardRegistration:
    """PUT /a2a/agents/<id>: the card becomes the agent's card (unverified until /verify)."""
    report = card_require_valid(card)
    signature = card_signature_check(card, None)
    source = CardSource()
    data = card_to_agent_input(card, report.index_view)
    preferred = data.endpoints[0].address if data.endpoints else ""
    with transaction.atomic():
        taken = AgentIdentity.objects.filter(owner=agent.owner, preferred_url=preferred).exclude(
            agent=agent
        )
        if taken.exists():
            raise ProblemError(
                409,
                "duplicate-agent",
                f"Another agent of {agent.owner} already has the preferred interface {preferred}.",
                [Problem("supportedInterfaces[0].url", "is another agent's preferred interface")],
            )
        _agent_card_apply(agent=agent, data=data, base_url=base_url)
        AgentIdentity.objects.update_or_create(
            agent=agent, defaults={"owner": agent.owner, "preferred_url": preferred}
        )
        _submitted_save(agent, card, report)
        _provenance_save(agent, source, signature)
        aap_status_refresh(agent=agent, card=card)
    return CardRegistration(agent, report, False, source, signature)


def _agent_card_apply(*, agent: Agent, data: core.AgentInput, base_url: str) -> None:
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
        base_url=base_url,
        name=data.name,
        description=data.description,
        version=data.version,
        capabilities=data.capabilities,
        endpoints=data.endpoints + others,
        source=Agent.Source.A2A_CARD,
        via_card=True,
    )


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
    # The domain served the card as it was, not as it is now.
    CardProvenance.objects.filter(agent=agent).update(verified_domain="", verified_at=None)
    aap_status_refresh(agent=agent, card=card)


def card_generated_refresh(agent: Agent, base_url: str) -> None:
    """Store the generated card of a native agent, or remove it when it has no A2A endpoint."""
    agent = agent_queryset().get(pk=agent.pk)
    card = card_generate(agent, base_url)
    if card is None:
        CardDocument.objects.filter(agent=agent).delete()
        _facets_save(agent, None)
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


def cards_bulk_import(*, owner: str, cards: list[dict], base_url: str) -> int:
    """Register many cards in one transaction with bulk inserts (imports, crawls, benchmarks).

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
    rows: dict[str, list] = {
        name: []
        for name in (
            "agents",
            "capabilities",
            "tags",
            "endpoints",
            "texts",
            "documents",
            "provenance",
            "identities",
            "facets",
            "aap",
            "aap_skills",
        )
    }
    for card, report, data, preferred in prepared:
        if preferred in taken:
            continue
        taken.add(preferred)
        agent = Agent(
            name=data.name,
            description=data.description,
            version=data.version,
            owner=owner,
            source=Agent.Source.A2A_CARD,
        )
        rows["agents"].append(agent)
        capabilities = [
            Capability(
                agent=agent,
                name=c.name,
                description=c.description,
                tags=list(c.tags),
                external_id=c.external_id,
                position=position,
            )
            for position, c in enumerate(data.capabilities)
        ]
        rows["capabilities"] += capabilities
        rows["tags"] += [
            CapabilityTag(capability=cap, agent=agent, value=tag.lower())
            for cap in capabilities
            for tag in dict.fromkeys(cap.tags)
        ]
        rows["endpoints"] += [
            core.endpoint_build(agent, e, position) for position, e in enumerate(data.endpoints)
        ]
        rows["texts"].append(
            AgentSearchText(
                agent=agent,
                text=search_text_build(agent.name, agent.description, capabilities),
                keys=search_keys_build(agent.name, capabilities),
            )
        )
        body = canonical_dumps(card)
        rows["documents"].append(
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
        signature = (
            card_signature_check(card, None)
            if report.signed
            else SignatureResult("unsigned", "The card carries no signatures.")
        )
        rows["provenance"].append(
            CardProvenance(
                agent=agent,
                discovery_path="import",
                signature=signature.status,
                signature_detail=signature.detail[:2000],
                signature_kid=(signature.kid or "")[:200],
                signature_checked_at=timezone.now(),
            )
        )
        rows["identities"].append(AgentIdentity(agent=agent, owner=owner, preferred_url=preferred))
        rows["facets"] += [
            AgentFacet(agent=agent, kind=kind, value=value)
            for kind, value in sorted(card_facets(card, report.index_view))
        ]
        status = aap_status_of(card)
        rows["aap"].append(AAPStatus(agent=agent, **status))
        rows["aap_skills"] += [
            AAPSkill(agent=agent, skill_id=skill) for skill in status["implemented_skills"]
        ]
    with transaction.atomic():
        for name, model in (
            ("agents", Agent),
            ("capabilities", Capability),
            ("tags", CapabilityTag),
            ("endpoints", Endpoint),
            ("texts", AgentSearchText),
            ("documents", CardDocument),
            ("provenance", CardProvenance),
            ("identities", AgentIdentity),
            ("facets", AgentFacet),
            ("aap", AAPStatus),
            ("aap_skills", AAPSkill),
        ):
            model.objects.bulk_create(rows[name], batch_size=1000)
        if rows["agents"]:
            audit_record(
                "agents.bulk-import",
                object_repr=f"{len(rows['agents'])} agents for {owner}",
                after={"created": len(rows["agents"]), "skipped": len(cards) - len(rows["agents"])},
            )
    return len(rows["agents"])
