"""The job queues' depth, read from the broker when ``/metrics`` is scraped: the jobs
waiting on the registry's two queues (``celery``, ``WEBHOOK_QUEUE``). One connection per
scrape, with a short deadline: a broker that does not answer gives no sample (and
``registry_job_broker_up`` 0), never a slow scrape."""

import logging

from celery import current_app
from django.conf import settings
from prometheus_client.core import GaugeMetricFamily

from registry.http.metrics import PREFIX

log = logging.getLogger(__name__)
BROKER_SECONDS = 2.0


def queue_names() -> tuple[str, ...]:
    return ("celery", settings.WEBHOOK_QUEUE)


def _depths() -> dict[str, int] | None:
    """Messages ready on each queue, or None when the broker cannot be read."""
    depths: dict[str, int] = {}
    try:
        with current_app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=BROKER_SECONDS)
            channel = conn.default_channel
            for name in queue_names():
                try:
                    declared = channel.queue_declare(queue=name, passive=True)
                except conn.channel_errors:
                    # Not declared yet (no job queued there since the broker started).
                    depths[name] = 0
                    channel = conn.channel()
                    continue
                depths[name] = declared.message_count
    except Exception as exc:  # any broker failure: the scrape goes on without the depths
        log.warning("Job queue depths not read: %s.", type(exc).__name__)
        return None
    return depths


def jobs_queued():
    depths = _depths()
    yield GaugeMetricFamily(
        PREFIX + "job_broker_up",
        "Whether the job broker answered this scrape (1) or not (0).",
        value=0 if depths is None else 1,
    )
    if depths is None:
        return
    queued = GaugeMetricFamily(
        PREFIX + "job_queue_depth", "Jobs waiting on a queue of the job broker.", labels=["queue"]
    )
    for name, depth in depths.items():
        queued.add_metric([name], depth)
    yield queued
