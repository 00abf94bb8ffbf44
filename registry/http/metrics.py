"""The registry's Prometheus series, counted in every process (web workers, job workers)
and added up by a scrape of ``GET /metrics`` (``registry.observability.scrape``).

prometheus-client's multiprocess mode: each process writes its counts to files in
``PROMETHEUS_MULTIPROC_DIR`` (the settings put it in the environment before anything
imports the client). Every series is named ``registry_…`` and made here, through
``counter`` and ``histogram`` (an app adds its own the same way), so no two places name
one twice. No label carries an id, a key, a path or a user's text: each takes a handful of
values (a route template, a method, a status, an outcome), so the number of series stays
bounded whatever clients send.
"""

from prometheus_client import Counter, Histogram

PREFIX = "registry_"
# Seconds: a card read on the lean lane takes well under a millisecond, a registration
# that fetches a card seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
JOB_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900)

# Every series made, by name (without the prefix): what the monitoring page documents.
series: dict[str, Counter | Histogram] = {}


def counter(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Counter:
    made = series[name] = Counter(PREFIX + name, documentation, labels)
    return made


def histogram(
    name: str, documentation: str, labels: tuple[str, ...], buckets: tuple[float, ...]
) -> Histogram:
    made = series[name] = Histogram(PREFIX + name, documentation, labels, buckets=buckets)
    return made


http_requests = counter(
    "http_requests",
    "HTTP requests answered, by route template, method, status and lane (django or lean).",
    ("route", "method", "status", "lane"),
)
http_duration = histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by route template, method and lane.",
    ("route", "method", "lane"),
    LATENCY_BUCKETS,
)
discovery_page_cache = counter(
    "discovery_page_cache",
    "Discovery's page cache: pages found cached at the current generation (hit) or not (miss).",
    ("outcome",),
)
card_spool = counter(
    "card_spool_reads",
    "Reads of the card spool (the per-process store of served cards): hit or miss.",
    ("outcome",),
)
jobs = counter("jobs", "Jobs run, by task name and outcome.", ("task", "outcome"))
job_duration = histogram(
    "job_duration_seconds", "Time a job ran, by task name.", ("task",), JOB_BUCKETS
)
webhook_deliveries = counter(
    "webhook_deliveries",
    "Webhook delivery attempts, by outcome (delivered, retry, failed).",
    ("outcome",),
)
rate_limited = counter(
    "rate_limit_refusals", "Requests refused by a rate limit, by its scope.", ("scope",)
)

# Methods that are a label as they are; any other (a client may send anything) is OTHER.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


# The series' children of each (route, method, status, lane) seen: ``labels()`` takes a
# lock and builds its key on every call, a few microseconds the lean lane would notice.
# Bounded as the labels are.
_children: dict[tuple, tuple] = {}


def http_observe(route: str, method: str, status: int, lane: str, seconds: float) -> None:
    """Count one answered request. ``route`` is a template or a lean route's prefix, never
    the path the client sent."""
    if method not in METHODS:
        method = "OTHER"
    key = (route, method, status, lane)
    children = _children.get(key)
    if children is None:
        children = _children[key] = (
            http_requests.labels(route, method, str(status), lane),
            http_duration.labels(route, method, lane),
        )
    children[0].inc()
    children[1].observe(seconds)
