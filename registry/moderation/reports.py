"""Reports: anyone reports an agent (a reason, a detail), attributed when an API key is
sent, limited per address (``REPORTS_PER_ADDRESS_HOUR``); the reporter's address is kept
only as a digest keyed with SECRET_KEY. ``REPORTS_QUARANTINE_AT`` open reports from
distinct reporters quarantine the agent pending a moderator. Admins resolve or dismiss
them; the agent's owner reads the open ones (never who sent them)."""

import hashlib
import hmac

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from registry.access.audit import audit_actor, audit_record
from registry.access.counters import window_allows
from registry.agents.models import Agent
from registry.http.problems import ProblemError
from registry.moderation.models import Moderation, Report
from registry.moderation.services import agent_quarantine, moderation_of
from registry.signals import agents_written_send


def reporter_digest(owner: str, address: str) -> str:
    who = f"owner:{owner}" if owner else f"address:{address}"
    return hmac.new(settings.SECRET_KEY.encode(), who.encode(), hashlib.sha256).hexdigest()


def report_limit(address: str) -> None:
    """429 past ``REPORTS_PER_ADDRESS_HOUR`` reports from this address."""
    per_hour = settings.REPORTS_PER_ADDRESS_HOUR
    if per_hour <= 0:
        return
    wait = window_allows("reports", f"address:{address}", f"{per_hour}/hour")
    if wait is not None:
        raise ProblemError(
            429,
            "throttled",
            f"This address sent {per_hour} reports this hour; retry later.",
            retry_after=int(wait + 0.999),
        )


def _open_count(agent: Agent) -> int:
    rows = Report.objects.filter(agent=agent, status=Report.Status.OPEN)
    return rows.aggregate(n=Count("reporter_digest", distinct=True))["n"]


@transaction.atomic
def report_create(*, agent: Agent, reason: str, detail: str, owner: str, address: str) -> Report:
    """File a report; past the threshold of distinct reporters, quarantine the agent."""
    report = Report.objects.create(
        agent=agent,
        reason=reason,
        detail=detail,
        reporter=owner,
        reporter_digest=reporter_digest(owner, address),
    )
    moderation = moderation_of(agent, lock=True)
    moderation.open_reports = _open_count(agent)
    moderation.save(update_fields=["open_reports", "updated_at"])
    agents_written_send([agent.pk])  # its trust score weighs the open reports
    threshold = settings.REPORTS_QUARANTINE_AT
    if threshold and moderation.open_reports >= threshold and moderation.quarantined_at is None:
        reasons = Report.objects.filter(agent=agent, status=Report.Status.OPEN)
        named = sorted(set(reasons.values_list("reason", flat=True)))
        token = audit_actor.set(("reports", ""))
        try:
            agent_quarantine(
                agent=agent,
                reason=f"Reported by {moderation.open_reports} reporters "
                f"({', '.join(named)}): pending review",
            )
        finally:
            audit_actor.reset(token)
    return report


@transaction.atomic
def report_resolve(*, report: Report, status: str, resolution: str = "") -> Report:
    """Close a report (resolved: acted upon; dismissed: unfounded); audited. What it
    quarantined stays so until a moderator releases the agent."""
    report = Report.objects.select_for_update().get(pk=report.pk)
    actor = audit_actor.get()
    report.status, report.resolution = status, resolution
    report.resolved_at = timezone.now()
    report.resolved_by = actor[0] if actor else "system"
    report.save()
    moderation = Moderation.objects.filter(agent_id=report.agent_id).first()
    if moderation is not None:
        moderation.open_reports = _open_count(report.agent)
        moderation.save(update_fields=["open_reports", "updated_at"])
        agents_written_send([report.agent_id])
    audit_record(
        f"report.{status}",
        agent_id=report.agent_id,
        object_repr=f"{report.reason} report",
        after={"id": str(report.id), "resolution": resolution[:500]},
    )
    return report
