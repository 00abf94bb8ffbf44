"""``GET /metrics``: the Prometheus text of every process's counts (prometheus-client's
multiprocess mode: the files in ``PROMETHEUS_MULTIPROC_DIR``), with the registry's gauges
read when scraped. Served to a client at ``METRICS_ALLOWED_ADDRESSES`` or bearing
``METRICS_TOKEN``; anyone else, and everyone while ``METRICS_ENABLED`` is off, gets the 404
of a path that does not exist."""

import hmac
import ipaddress
from pathlib import Path

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from registry import extensions
from registry.access.counters import client_ip_of
from registry.agents.models import Agent, Endpoint
from registry.fastpath.replicas import replica_aliases, replica_check
from registry.http import metrics
from registry.http.metrics import PREFIX
from registry.http.problems import problem_response
from registry.observability.queues import jobs_queued


def metrics_allowed(meta) -> bool:
    """A bearer of the token, or a client at an allowed address (as the rate limits see
    it: behind TRUSTED_PROXY_COUNT proxies, the address they forward)."""
    token = settings.METRICS_TOKEN
    if token:
        sent = meta.get("HTTP_AUTHORIZATION", "")
        scheme, _, value = sent.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token):
            return True
    try:
        address = ipaddress.ip_address(client_ip_of(meta))
    except ValueError:
        return False
    return any(address in network for network in settings.METRICS_ALLOWED_ADDRESSES)


class ProcessesCounted:
    """Every process's counts: the files in ``METRICS_SCRAPE_DIR`` and the folders below it
    (``PROMETHEUS_MULTIPROC_DIR`` by default; in containers, each its own folder below a
    shared one: docs/operations/deploy.md), added up as prometheus-client's multiprocess
    collector adds up one folder's."""

    def __init__(self, folder: Path):
        self.folder = folder

    def collect(self):
        files = [str(path) for path in sorted(self.folder.rglob("*.db"))]
        return MultiProcessCollector.merge(files, accumulate=True)


# The replicas' gauges, exported only where DATABASE_REPLICA_URLS names replicas.
REPLICA_SERIES = ("database_replica_lag_seconds", "database_replica_usable")


class RegistryGauges:
    """What the registry holds, counted when scraped (two grouped counts): agents by
    status, endpoints live."""

    def collect(self):
        agents = GaugeMetricFamily(
            PREFIX + "agents", "Agents in the registry, by status.", labels=["status"]
        )
        rows = Agent.objects.order_by().values("status").annotate(n=Count("id"))
        counted = {row["status"]: row["n"] for row in rows}
        for status in Agent.Status.values:
            agents.add_metric([status], counted.get(status, 0))
        yield agents
        live = Endpoint.objects.filter(alive_until__gt=timezone.now()).count()
        yield GaugeMetricFamily(
            PREFIX + "endpoints_live",
            "Endpoints live now: a heartbeat, renewal or probe within its grace.",
            value=live,
        )
        aliases = replica_aliases()
        if aliases:
            lag = GaugeMetricFamily(
                PREFIX + REPLICA_SERIES[0],
                "Each read replica's replay lag behind the primary (absent: it does not answer).",
                labels=["replica"],
            )
            up = GaugeMetricFamily(
                PREFIX + REPLICA_SERIES[1],
                "Each read replica: 1 while it answers within DATABASE_REPLICA_MAX_LAG_SECONDS.",
                labels=["replica"],
            )
            for alias in aliases:
                state = replica_check(alias)
                if state.lag_seconds is not None:
                    lag.add_metric([alias], state.lag_seconds)
                up.add_metric([alias], 1 if state.usable() else 0)
            yield lag
            yield up
        yield from jobs_queued()
        for collect in extensions.scrape_gauges.read():
            yield from collect()


@require_safe
def metrics_view(request) -> HttpResponse:
    if not (settings.METRICS_ENABLED and metrics_allowed(request.META)):
        return problem_response(404, "not-found", f"There is nothing at {request.path}.")
    metrics.http_flush()  # this process's requests so far (the others' as of their last second)
    scraped = CollectorRegistry()
    scraped.register(ProcessesCounted(settings.METRICS_SCRAPE_DIR))
    scraped.register(RegistryGauges())
    response = HttpResponse(generate_latest(scraped), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
