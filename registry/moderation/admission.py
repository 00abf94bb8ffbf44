"""Admission (``REGISTRY_ADMISSION``): under ``open`` every agent is listed as written;
under ``review`` a new agent, a change that a scanner flags for review, and a change to a
rejected agent wait for a moderator (``pending``: unlisted, kept for the owner and the
admins) unless the owner is trusted (``ADMISSION_TRUSTED_OWNERS``, a verified publisher,
or, with ``ADMISSION_TRUST_CLAIMED_DOMAINS``, the verified claimant of the agent's domain).
A flagged change withholds the agent until it is approved. Moderators approve or reject
(``services``)."""

from urllib.parse import urlsplit

from django.conf import settings

from registry.agents.listing import agent_admitted_set
from registry.agents.models import Agent, DomainClaim
from registry.moderation.models import Moderation
from registry.moderation.publishers import owner_verified


def owner_trusted(agent: Agent) -> bool:
    if agent.owner in settings.ADMISSION_TRUSTED_OWNERS or owner_verified(agent):
        return True
    if not settings.ADMISSION_TRUST_CLAIMED_DOMAINS:
        return False
    hosts = set()
    for endpoint in agent.endpoints.all():
        try:
            host = urlsplit(endpoint.address).hostname
        except ValueError:
            continue
        if host:
            hosts.add(host)
    if not hosts:
        return False
    claimed = DomainClaim.objects.filter(
        owner=agent.owner, state=DomainClaim.State.VERIFIED, domain__in=hosts
    )
    return claimed.exists()


def admission_decide(agent: Agent, findings: list[dict], *, created: bool) -> None:
    """Hold the written agent for review when it must wait (inside the write)."""
    if settings.REGISTRY_ADMISSION != "review":
        return
    flagged = [f for f in findings if f["verdict"] == "review"]
    if not created and not flagged:
        moderation = Moderation.objects.filter(agent=agent).only("admission").first()
        if moderation is None or moderation.admission != Moderation.Admission.REJECTED:
            return
    if owner_trusted(agent):
        return
    reasons = sorted({f"{f['rule']} at {f['path'] or 'the card'}" for f in flagged})
    why = ("flagged: " + ", ".join(reasons)) if reasons else ("new agent" if created else "changed")
    moderation, _ = Moderation.objects.select_for_update().get_or_create(agent=agent)
    if created:
        moderation.approved_once = False
    elif moderation.admission == Moderation.Admission.APPROVED:
        moderation.approved_once = True
    moderation.admission = Moderation.Admission.PENDING
    moderation.admission_reason = why
    moderation.save()
    agent_admitted_set(agent=agent, admitted=moderation.listed)
