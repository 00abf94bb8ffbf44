"""Admission (``REGISTRY_ADMISSION``): under ``open`` every agent is listed as written;
under ``review`` a new agent, a change that a scanner flags for review, and a change to a
rejected agent wait for a moderator (``pending``: unlisted, kept for the owner and the
admins) unless the owner is trusted (``ADMISSION_TRUSTED_OWNERS``, a verified publisher,
or, with ``ADMISSION_TRUST_CLAIMED_DOMAINS``, the verified claimant of the agent's domain).
A flagged change of an approved agent waits on its own (``changes``: the agent keeps
serving its approved version), unless no write that can wait made it (then the agent is
withheld until approved). What the moderators approved does not flag a change again.
Moderators approve or reject (``services``)."""

from urllib.parse import urlsplit

from django.conf import settings

from registry.agents.holds import hold_request, holds_bypassed_now
from registry.agents.listing import agent_admitted_set
from registry.agents.models import Agent, DomainClaim
from registry.moderation.changes import change_keep, change_superseded
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


def _finding_key(finding: dict) -> tuple:
    return (finding["rule"], finding["path"], finding["message"])


def admission_decide(agent: Agent, findings: list[dict], *, created: bool) -> bool:
    """Hold the written agent for review when it must wait (inside the write); True when
    the write itself waits (undone: a change of an approved agent, ``changes``)."""
    if settings.REGISTRY_ADMISSION != "review" or holds_bypassed_now():
        return False
    flagged = [f for f in findings if f["verdict"] == "review"]
    moderation = Moderation.objects.filter(agent=agent).first()
    approved = moderation is None or moderation.admission == Moderation.Admission.APPROVED
    if not created and approved:
        # What the moderators approved (the findings of what it serves) does not wait again.
        accepted = {_finding_key(f) for f in (moderation.findings if moderation else [])}
        flagged = [f for f in flagged if _finding_key(f) not in accepted]
        if not flagged or owner_trusted(agent):
            change_superseded(agent)
            return False
        if hold_request(agent, change_keep(_why(flagged, created), findings)):
            return True
    elif not created and not flagged and (moderation is None or not moderation.rejected):
        return False
    if owner_trusted(agent):
        return False
    moderation, _ = Moderation.objects.select_for_update().get_or_create(agent=agent)
    if created:
        moderation.approved_once = False
    elif moderation.admission == Moderation.Admission.APPROVED:
        moderation.approved_once = True
    moderation.admission = Moderation.Admission.PENDING
    moderation.admission_reason = _why(flagged, created)
    moderation.save()
    agent_admitted_set(agent=agent, admitted=moderation.listed)
    return False


def _why(flagged: list[dict], created: bool) -> str:
    reasons = sorted({f"{f['rule']} at {f['path'] or 'the card'}" for f in flagged})
    if reasons:
        return "flagged: " + ", ".join(reasons)
    return "new agent" if created else "changed"
