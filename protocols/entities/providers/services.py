"""EDP provider registration (EDP §3; ``POST /v1/provider/register`` after its implementers
guide): the provider and the entities it claims, each claim kept in step with the cards."""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from protocols.entities.cards.signatures import public_key_problem
from protocols.entities.cards.validation import registration_validate
from protocols.entities.models import Entity, Provider, ProviderClaim
from protocols.entities.registration.bulk import claims_bulk_store
from protocols.entities.registration.services import (
    claim_entities_remove,
    claims_sync,
    claims_with_ids,
    domain_verify,
)
from registry.access.auth import Principal
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.hosts import domain_parse
from registry.signals import writes_batched

CLAIM_FIELDS = ("name", "domain", "category", "city", "country", "lat", "lng", "capabilities")


@dataclass
class Registered:
    provider: Provider
    created: bool
    warnings: list[Problem]


def _claim_fields(item: dict) -> dict:
    location = item.get("location") or {}
    coordinates = location.get("coordinates") or {}
    return {
        "name": item["name"],
        "domain": domain_parse(item["domain"]).host if item.get("domain") else "",
        "category": item.get("category", ""),
        "city": location.get("city", ""),
        "country": location.get("country", ""),
        "lat": coordinates.get("lat"),
        "lng": coordinates.get("lng"),
        "capabilities": list(item.get("capabilities") or []),
    }


def registration_checked(payload: Any, *, most: int) -> None:
    """A 400 naming every problem of a registration, and the most entities it may list."""
    problems = registration_validate(payload)
    entities = payload.get("entities") if isinstance(payload, dict) else None
    if isinstance(entities, list) and len(entities) > most:
        problems.append(Problem("entities", f"may list at most {most} items"))
    if problems:
        raise ProblemError(
            400,
            "invalid-registration",
            f"The provider registration is invalid: {problems[0].path} {problems[0].message}.",
            problems,
            maxEntities=most,
        )


@transaction.atomic
@writes_batched()  # what reads derive from the agents (listings) rebuilt once, for them all
def provider_register(*, principal: Principal, payload: dict) -> Registered:
    """Register or update a provider and its claims; only its owner's key (or an admin key)
    may update it. A public key that is no P-256 PEM is kept with a warning: the provider's
    signed JWTs then never verify."""
    registration_checked(payload, most=settings.PROVIDER_REGISTER_MAX)
    data = payload["provider"]
    provider = Provider.objects.select_for_update().filter(provider_id=data["id"]).first()
    created = provider is None
    if provider is not None and not principal.may_change(provider.owner):
        raise ProblemError(
            403,
            "forbidden",
            f"Provider {data['id']!r} was registered with another API key; only that key's "
            "owner (or an admin key) may change it.",
            [Problem("provider.id", "is registered by another owner")],
        )
    provider = provider or Provider(provider_id=data["id"], owner=principal.owner)
    serving = (provider.endpoint, provider.capabilities)
    provider.name, provider.endpoint = data["name"], data["endpoint"]
    provider.public_key = data.get("public_key", "")
    provider.capabilities = list(data.get("capabilities") or [])
    provider.save()
    warnings = []
    if provider.public_key and (why := public_key_problem(provider.public_key)):
        warnings.append(
            Problem("provider.public_key", f"{why}: this provider's signed JWTs cannot verify")
        )
    old = claims_with_ids(provider.claims.select_related("provider"))
    wanted = {item["entity_id"]: _claim_fields(item) for item in payload["entities"]}
    removed = [c for c in old if c.entity_id not in wanted]
    claim_entities_remove(removed)
    ProviderClaim.objects.filter(pk__in=[c.pk for c in removed]).delete()
    kept = {c.entity_id for c in old} - {c.entity_id for c in removed}
    # A claim the same as before, of a provider serving as before: its entity stays as it is.
    same = serving == (provider.endpoint, provider.capabilities)
    unchanged = {
        c.entity_id
        for c in old
        if same and c.entity_id in wanted and _fields_of(c) == wanted[c.entity_id]
    }
    domains = {c.domain for c in old}
    for entity_id, fields in wanted.items():
        if entity_id in kept and entity_id not in unchanged:
            ProviderClaim.objects.filter(provider=provider, entity_id=entity_id).update(**fields)
        domains.add(fields["domain"])
    new = [ProviderClaim(provider=provider, entity_id=e, **f) for e, f in wanted.items()]
    ProviderClaim.objects.bulk_create([c for c in new if c.entity_id not in kept], batch_size=1000)
    # A domain some card describes: its levels and its claims recomputed together. Any other
    # claim is an entity of its own: new ones written in bulk, known ones one by one.
    carded = set(
        Entity.objects.filter(domain__in=domains - {""}, card__isnull=False)
        .values_list("domain", flat=True)
        .distinct()
    )
    for domain in sorted(carded):
        domain_verify(domain)
    rest = claims_with_ids(
        provider.claims.exclude(domain__in=carded).select_related("provider").order_by("pk")
    )
    known = set(
        Entity.objects.filter(key__in=[_entity_key(c) for c in rest]).values_list("key", flat=True)
    )
    claims_sync([c for c in rest if _entity_key(c) in known and c.entity_id not in unchanged])
    fresh = [c for c in rest if _entity_key(c) not in known]
    if fresh:
        claims_bulk_store(owner=provider.owner, claims=fresh)
    return Registered(provider, created, warnings)


def _fields_of(claim: ProviderClaim) -> dict:
    return {name: getattr(claim, name) for name in CLAIM_FIELDS}


def _entity_key(claim: ProviderClaim) -> str:
    return f"provider:{claim.provider_id_text}/{claim.entity_id}"
