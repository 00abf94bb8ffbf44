"""What moderation tells of how far to trust a listing, as trust signals (registry/trust/,
``registry.extensions.TrustSignal``): whether its owner or domain is a verified publisher,
and how many distinct reporters have an open report on it. Read in bulk from each agent's
``Moderation`` row; registered by the core (registry/apps.py)."""

from django.conf import settings

from registry.extensions import TrustSignal
from registry.moderation.models import Moderation


def _rows(agent_ids: list) -> dict:
    found = Moderation.objects.filter(agent_id__in=agent_ids)
    return {
        row["agent_id"]: row
        for row in found.values("agent_id", "verified_publisher", "open_reports")
    }


def verified_publisher(agent_ids: list) -> dict:
    """1 when the registry's moderators verified the agent's owner or domain; else 0."""
    return {
        pk: (1.0 if row["verified_publisher"] else 0.0, {"verified": row["verified_publisher"]})
        for pk, row in _rows(agent_ids).items()
    }


def open_reports(agent_ids: list) -> dict:
    """1 with no open report; less by each distinct reporter with one open, 0 at the number
    that quarantines an agent (``REPORTS_QUARANTINE_AT``, 3 when that is off)."""
    threshold = settings.REPORTS_QUARANTINE_AT or 3
    return {
        pk: (max(0.0, 1 - row["open_reports"] / threshold), {"reporters": row["open_reports"]})
        for pk, row in _rows(agent_ids).items()
    }


SIGNALS = [
    TrustSignal(
        "verifiedPublisher",
        verified_publisher,
        "The registry's moderators verified its owner or domain as a publisher.",
    ),
    TrustSignal(
        "openReports",
        open_reports,
        "Open reports on it from distinct reporters (none: full).",
        missing=1.0,
    ),
]
