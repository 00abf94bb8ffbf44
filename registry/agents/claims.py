"""Domain claims: ownership by proof, not by who registered first.

A key claims a domain (``claim_create``: a random token); the domain publishes the token
at ``https://<domain>/.well-known/a2a-registry-claim`` (the file's content) or as a DNS TXT
record at ``_a2a-registry-claim.<host>`` (``v=1; t=<token>``); ``claim_verify`` checks it
(the safe fetcher, then the TXT lookup) and, in one transaction, marks the claim verified
(an earlier owner's verified claim of the domain is superseded), audits ``domain.claimed``
and sends ``domain_claimed`` (registry.signals): each protocol app gives the claimant's
owner every agent it registered from that domain (a2a: cards served by it; entities:
its entity card's entities), through ``registry.agents.ownership.agent_owner_move``.

Afterwards, registrations from a claimed domain by any other owner are refused (409
``domain-claimed``, ``domain_claim_check``): the domain's owner registers them.
"""

import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from registry.access.audit import audit_record
from registry.agents.models import DomainClaim
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.dns import TxtLookupError, txt_values
from registry.outbound.fetch import FetchError, fetch
from registry.outbound.hosts import InvalidHost, domain_parse
from registry.signals import domain_claimed

CLAIM_PATH = "/.well-known/a2a-registry-claim"
CLAIM_TXT_LABEL = "_a2a-registry-claim"


def claim_domain(value: str) -> str:
    """host[:port] as registrations record it (no port 443); 400 naming ``domain``."""
    try:
        parsed = domain_parse(value)
    except InvalidHost as exc:
        raise ProblemError(
            400, "validation-error", f"domain {exc}.", [Problem("domain", str(exc))]
        ) from None
    return parsed.authority.removesuffix(":443")


def claim_instructions(claim: DomainClaim) -> dict:
    host = domain_parse(claim.domain).host
    return {
        "wellKnown": {"url": f"https://{claim.domain}{CLAIM_PATH}", "content": claim.token},
        "dnsTxt": {"name": f"{CLAIM_TXT_LABEL}.{host}", "value": f"v=1; t={claim.token}"},
    }


def claim_create(*, owner: str, domain: str) -> DomainClaim:
    domain = claim_domain(domain)
    mine = DomainClaim.objects.filter(
        domain=domain, owner=owner, state=DomainClaim.State.VERIFIED
    ).exists()
    if mine:
        raise ProblemError(409, "domain-claimed", f"{owner} has claimed {domain} already.")
    claim = DomainClaim.objects.create(
        domain=domain,
        owner=owner,
        token=secrets.token_urlsafe(32),
        expires_at=timezone.now() + timedelta(seconds=settings.DOMAIN_CLAIM_EXPIRY_SECONDS),
    )
    audit_record("domain.claim-requested", object_repr=domain, after={"claim": str(claim.id)})
    return claim


def _txt_token(record: str) -> str | None:
    fields = dict(part.strip().partition("=")[::2] for part in record.split(";") if "=" in part)
    return fields.get("t") if fields.get("v") == "1" else None


def _proof(claim: DomainClaim) -> tuple[str | None, list[Problem]]:
    """How the domain proves the claim ("well-known" or "dns"), or None and why not."""
    problems = []
    url = f"https://{claim.domain}{CLAIM_PATH}"
    try:
        result = fetch(url, accept_json=False, max_bytes=4096)
        if result.body.decode("utf-8", errors="replace").strip() == claim.token:
            return "well-known", []
        problems.append(Problem(url, "does not hold the claim's token"))
    except FetchError as exc:
        problems.append(Problem(url, f"{exc.reason}: {exc.detail}"))
    name = f"{CLAIM_TXT_LABEL}.{domain_parse(claim.domain).host}"
    try:
        records = txt_values(name)
    except TxtLookupError as exc:
        problems.append(Problem(name, str(exc)))
        return None, problems
    if any(_txt_token(record) == claim.token for record in records):
        return "dns", []
    problems.append(Problem(name, "has no TXT record v=1; t=<the claim's token>"))
    return None, problems


def claim_verify(*, claim: DomainClaim) -> tuple[DomainClaim, int]:
    """Check the claim's proof; on success hand the domain's agents to its owner. Returns
    the claim and how many agents moved."""
    if claim.state == DomainClaim.State.VERIFIED:
        return claim, 0
    if claim.state == DomainClaim.State.EXPIRED or claim.expires_at <= timezone.now():
        DomainClaim.objects.filter(pk=claim.pk).update(state=DomainClaim.State.EXPIRED)
        raise ProblemError(
            409, "claim-expired", f"Claim {claim.id} expired unverified: make a new one."
        )
    method, problems = _proof(claim)
    if method is None:
        raise ProblemError(
            422,
            "claim-unproven",
            f"{claim.domain} does not publish the claim's token (errors[] says where it looked).",
            problems,
        )
    with transaction.atomic():
        claim = DomainClaim.objects.select_for_update().get(pk=claim.pk)
        DomainClaim.objects.filter(domain=claim.domain, state=DomainClaim.State.VERIFIED).exclude(
            pk=claim.pk
        ).update(state=DomainClaim.State.EXPIRED)
        claim.state, claim.method, claim.verified_at = "verified", method, timezone.now()
        claim.save(update_fields=["state", "method", "verified_at"])
        answers = domain_claimed.send(
            sender=DomainClaim, domain=claim.domain, owner=claim.owner, claim=claim
        )
        moved = sum(answer for _, answer in answers if isinstance(answer, int))
        audit_record(
            "domain.claimed",
            object_repr=claim.domain,
            after={"claim": str(claim.id), "owner": claim.owner, "method": method, "moved": moved},
        )
    return claim, moved


def domain_claim_check(*, domain: str, owner: str) -> None:
    """A registration from ``domain`` for ``owner``: 409 ``domain-claimed`` when another
    owner has proven the domain is theirs."""
    claimant = (
        DomainClaim.objects.filter(domain=domain, state=DomainClaim.State.VERIFIED)
        .values_list("owner", flat=True)
        .first()
    )
    if claimant is not None and claimant != owner:
        raise ProblemError(
            409,
            "domain-claimed",
            f"{domain} is claimed by its owner ({claimant}): only that owner registers "
            "what it serves.",
            [Problem("domain", "is claimed by another owner")],
        )


def claims_expire() -> int:
    """Mark unverified claims past their expiry as expired; returns how many."""
    return DomainClaim.objects.filter(
        state=DomainClaim.State.PENDING, expires_at__lte=timezone.now()
    ).update(state=DomainClaim.State.EXPIRED)
