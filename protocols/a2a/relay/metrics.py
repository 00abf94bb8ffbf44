"""The relay's Prometheus series (made through the core's ``registry.http.metrics``):
requests published to agents' queues, replies taken from the reply queue, the round trip
from a task's creation to its first reply, and the tasks in flight, counted from
``RelayTask`` rows when ``/metrics`` is scraped. Labels take a handful of values: never
a queue's name, a task's id or an agent's."""

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily

from protocols.a2a.models import RelayTask
from registry.http import metrics

published = metrics.counter(
    "relay_requests",
    "A2A requests the relay published to agents' queues, by outcome (published, refused).",
    ("outcome",),
)
replies = metrics.counter(
    "relay_replies",
    "Replies the relay's consumer took, by outcome (applied, dead-lettered, requeued).",
    ("outcome",),
)
round_trip = metrics.histogram(
    "relay_round_trip_seconds",
    "Time from a relayed task's creation to the first reply applied to it.",
    (),
    metrics.JOB_BUCKETS,
)
# The states of a task no reply has finished yet: waiting on its agent.
IN_FLIGHT = (
    RelayTask.PENDING,
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_AUTH_REQUIRED",
)


def relay_gauges():
    """``registry_relay_tasks_in_flight{state}``: one grouped count, at scrape time."""
    rows = (
        RelayTask.objects.filter(state__in=IN_FLIGHT)
        .order_by()
        .values("state")
        .annotate(n=Count("id"))
    )
    counted = {row["state"]: row["n"] for row in rows}
    family = GaugeMetricFamily(
        metrics.PREFIX + "relay_tasks_in_flight",
        "Relayed tasks not finished yet (pending, submitted, working, waiting for input), "
        "by state.",
        labels=["state"],
    )
    for state in IN_FLIGHT:
        family.add_metric([state.removeprefix("TASK_STATE_").lower()], counted.get(state, 0))
    yield family
