"""Moderation's gauges, read when ``/metrics`` is scraped (``register_scrape_gauges``):
what waits for a moderator. One grouped count over the queue's partial index."""

from django.db.models import Count, Q
from prometheus_client.core import GaugeMetricFamily

from registry.http.metrics import PREFIX
from registry.moderation.models import Moderation, Report


def moderation_gauges():
    """``registry_moderation_pending{kind}``: agents pending review, agents quarantined,
    open reports."""
    counts = Moderation.objects.aggregate(
        review=Count("pk", filter=Q(admission=Moderation.Admission.PENDING)),
        quarantined=Count("pk", filter=Q(quarantined_at__isnull=False)),
    )
    counts["reports"] = Report.objects.filter(status=Report.Status.OPEN).count()
    family = GaugeMetricFamily(
        PREFIX + "moderation_pending",
        "What waits for a moderator: agents pending review, agents quarantined, open reports.",
        labels=["kind"],
    )
    for kind in ("review", "quarantined", "reports"):
        family.add_metric([kind], counts[kind])
    yield family
