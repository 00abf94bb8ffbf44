"""The registry's Prometheus series, counted in every process (web workers, job workers)
and added up by a scrape of ``GET /metrics`` (``registry.observability.scrape``).

prometheus-client's multiprocess mode: each process writes its counts to files in
``PROMETHEUS_MULTIPROC_DIR`` (the settings put it in the environment before anything
imports the client). Every series is named ``registry_…`` and made here, through
``counter`` and ``histogram`` (an app adds its own the same way), so no two places name
one twice. No label carries an id, a key, a path or a user's text: each takes a handful of
values (a route template, a method, a status, an outcome), so the number of series stays
bounded whatever clients send.

``METRICS_ENABLED`` off: every series made here counts nothing and makes no labelled
child (``labels`` gives an idle one), ``http_observe`` and ``tally`` return at once, and the
settings give prometheus-client no folder, so no process writes a file.
"""

import atexit
import bisect
import threading
import time

from django.conf import settings
from prometheus_client import Counter, Gauge, Histogram

PREFIX = "registry_"
# Seconds: a card read on the lean lane takes well under a millisecond, a registration
# that fetches a card seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
JOB_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900)


def enabled() -> bool:
    """METRICS_ENABLED: read at each call (an attribute of the settings once read), so a
    test's override holds."""
    return settings.METRICS_ENABLED


class _Idle:
    """What ``labels`` gives while metrics are off: counts nothing."""

    def inc(self, amount: float = 1, *args, **kwargs) -> None:
        pass

    dec = set = observe = inc


IDLE = _Idle()


class SwitchedCounter(Counter):
    def labels(self, *values, **named):
        return super().labels(*values, **named) if enabled() else IDLE

    def inc(self, amount: float = 1, *args, **kwargs) -> None:
        if enabled():
            super().inc(amount, *args, **kwargs)


class SwitchedHistogram(Histogram):
    def labels(self, *values, **named):
        return super().labels(*values, **named) if enabled() else IDLE

    def observe(self, amount: float, *args, **kwargs) -> None:
        if enabled():
            super().observe(amount, *args, **kwargs)


class SwitchedGauge(Gauge):
    def labels(self, *values, **named):
        return super().labels(*values, **named) if enabled() else IDLE

    def inc(self, amount: float = 1) -> None:
        if enabled():
            super().inc(amount)

    def dec(self, amount: float = 1) -> None:
        if enabled():
            super().dec(amount)

    def set(self, value: float) -> None:
        if enabled():
            super().set(value)


# Every series made, by name (without the prefix): what the monitoring page documents.
series: dict[str, Counter | Gauge | Histogram] = {}


def counter(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Counter:
    made = series[name] = SwitchedCounter(PREFIX + name, documentation, labels)
    return made


def histogram(
    name: str, documentation: str, labels: tuple[str, ...], buckets: tuple[float, ...]
) -> Histogram:
    made = series[name] = SwitchedHistogram(PREFIX + name, documentation, labels, buckets=buckets)
    return made


def gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Gauge:
    """A gauge that a process raises and lowers (what it holds open now): a scrape adds up
    the processes still running (prometheus-client's ``livesum``)."""
    made = series[name] = SwitchedGauge(
        PREFIX + name, documentation, labels, multiprocess_mode="livesum"
    )
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
db_statements = counter(
    "db_statements",
    "Database statements run while Django answered a request, by route template and method.",
    ("route", "method"),
)
db_seconds = counter(
    "db_statement_seconds",
    "Time spent in those statements (seconds), by route template and method.",
    ("route", "method"),
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
webhook_lag = histogram(
    "webhook_delivery_lag_seconds",
    "Time from an event's commit to its webhook's delivery (delivered attempts only).",
    (),
    JOB_BUCKETS,
)
event_streams = gauge("event_streams_open", "Event streams (GET /events) open now.")
semantic_duration = histogram(
    "semantic_request_duration_seconds",
    "Time the embedding service took to answer a process's request, by operation and outcome.",
    ("operation", "outcome"),
    LATENCY_BUCKETS,
)
rate_limited = counter(
    "rate_limit_refusals", "Requests refused by a rate limit, by its scope.", ("scope",)
)

# Methods that are a label as they are; any other (a client may send anything) is OTHER.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


# Requests are counted in this process first and written to the series at most once a
# second (``http_flush``: by the next request after that second, by a scrape in this process,
# at exit): each write to prometheus-client's files takes a lock and a few microseconds, which
# the lean lane's card fetch, some 13 microseconds of CPU, would pay on every request. A
# scrape sees every other process's counts as of its last second.
FLUSH_SECONDS = 1.0
_BOUNDS = (*LATENCY_BUCKETS, float("inf"))
# (route, method, status, lane) -> [count, seconds, count in each bucket]; bounded as the
# labels are.
_pending: dict[tuple, list] = {}
_pending_lock = threading.Lock()
_flushed_at = [time.monotonic()]


def http_observe(
    route: str,
    method: str,
    status: int,
    lane: str,
    seconds: float,
    statements: int = 0,
    statement_seconds: float = 0.0,
) -> None:
    """Count one answered request. ``route`` is a template or a lean route's prefix, never
    the path the client sent; ``statements``: the database statements it ran and their
    ``statement_seconds`` (Django's requests: ``StatementsCounted``)."""
    if not settings.METRICS_ENABLED:
        return
    if method not in METHODS:
        method = "OTHER"
    key = (route, method, status, lane)
    with _pending_lock:
        pending = _pending.get(key)
        if pending is None:
            pending = _pending[key] = [0, 0.0, [0] * len(_BOUNDS), 0, 0.0]
        pending[0] += 1
        pending[1] += seconds
        pending[2][bisect.bisect_left(_BOUNDS, seconds)] += 1
        pending[3] += statements
        pending[4] += statement_seconds
    now = time.monotonic()
    if now - _flushed_at[0] >= FLUSH_SECONDS:
        http_flush(now)


# (counter, its labels) -> the count since the last flush: the hot paths' hits and misses
# (the card spool's, discovery's page cache's), written with the requests.
_tallies: dict[tuple, int] = {}


def tally(counter: Counter, *labels: str) -> None:
    """Count one in ``counter`` (with these labels), written at the next flush."""
    if not settings.METRICS_ENABLED:
        return
    key = (counter, labels)
    with _pending_lock:
        _tallies[key] = _tallies.get(key, 0) + 1
    now = time.monotonic()
    if now - _flushed_at[0] >= FLUSH_SECONDS:
        http_flush(now)


def http_flush(now: float | None = None) -> None:
    """Write the requests and tallies counted since the last flush to the series."""
    with _pending_lock:
        _flushed_at[0] = time.monotonic() if now is None else now
        pending = [(key, counts) for key, counts in _pending.items() if counts[0]]
        _pending.clear()
        tallies = list(_tallies.items())
        _tallies.clear()
    if not settings.METRICS_ENABLED:
        return  # counted before metrics were switched off (a test's override): dropped
    for (counter, labels), count in tallies:
        counter.labels(*labels).inc(count)
    for (route, method, status, lane), (count, seconds, buckets, statements, db) in pending:
        http_requests.labels(route, method, str(status), lane).inc(count)
        if statements:
            db_statements.labels(route, method).inc(statements)
            db_seconds.labels(route, method).inc(db)
        duration = http_duration.labels(route, method, lane)
        # Histogram.observe's writes, once for all of them: the sum, and each bucket's count.
        duration._sum.inc(seconds)
        for index, in_bucket in enumerate(buckets):
            if in_bucket:
                duration._buckets[index].inc(in_bucket)


atexit.register(http_flush)
