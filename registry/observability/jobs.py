"""The jobs' side of observability, through Celery's signals: a job queued while a request
is answered carries the request's id (a message header, ``before_task_publish``) and runs
with it (``task_prerun``), so the worker's log lines carry it; every job run is counted by
task name and outcome, with its duration (``task_prerun``, ``task_postrun``).

Eager jobs (the tests') are not published: they run in the request's own context, whose id
they keep."""

import time

from celery.signals import before_task_publish, task_postrun, task_prerun

from registry.http import metrics
from registry.http.request_ids import request_id

HEADER = "request_id"
# What task_prerun started, by task id, until task_postrun: the request id's token and the
# clock. A job that never reaches postrun (its process killed) leaves its entry here: the
# process ends with it.
_running: dict[str, tuple] = {}


def request_id_publish(headers: dict | None = None, **kwargs) -> None:
    rid = request_id.get()
    if rid and headers is not None:
        headers.setdefault(HEADER, rid)


def job_started(task_id: str | None = None, task=None, **kwargs) -> None:
    rid = getattr(task.request, HEADER, None) if task is not None else None
    token = request_id.set(rid) if isinstance(rid, str) and rid else None
    _running[task_id] = (token, time.perf_counter())


def job_finished(task_id: str | None = None, task=None, state: str | None = None, **kwargs):
    token, started = _running.pop(task_id, (None, None))
    if token is not None:
        request_id.reset(token)
    name = getattr(task, "name", None) or "unknown"
    metrics.jobs.labels(name, (state or "unknown").lower()).inc()
    if started is not None:
        metrics.job_duration.labels(name).observe(time.perf_counter() - started)


def jobs_observe() -> None:
    """Connect the handlers (registry.apps, in every process: the web publishes, the
    workers run)."""
    before_task_publish.connect(request_id_publish, weak=False, dispatch_uid="request-id")
    task_prerun.connect(job_started, weak=False, dispatch_uid="jobs-started")
    task_postrun.connect(job_finished, weak=False, dispatch_uid="jobs-finished")
