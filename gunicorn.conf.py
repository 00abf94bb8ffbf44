"""gunicorn's settings file (read from the checkout, where Procfile.serve starts gunicorn):
its own lines written as the registry's (LOG_FORMAT); and the metrics' files of every
process (registry/observability/, prometheus-client's multiprocess mode) outlive it, so the
master clears those of processes no longer running when it starts, and says when a worker
ended."""

import os
from pathlib import Path

# LOG_FORMAT=json: gunicorn's own lines (workers booted and ended, its access log when
# ACCESS_LOG asks for one) as JSON too, through the root handler the app's lines use.
if os.environ.get("LOG_FORMAT") == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "registry.logs.JsonFormatter"}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
        "root": {"handlers": ["console"], "level": "INFO"},
        "loggers": {
            "gunicorn.error": {"handlers": [], "propagate": True, "level": "INFO"},
            "gunicorn.access": {"handlers": [], "propagate": True, "level": "INFO"},
        },
    }


def _metrics_dir() -> Path:
    # The settings put PROMETHEUS_MULTIPROC_DIR in the environment (with its default under
    # the var dir); the workers inherit it from here.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    from django.conf import settings

    return settings.PROMETHEUS_MULTIPROC_DIR


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def on_starting(server) -> None:
    """The counts of an earlier run go; a job worker's that is running stay."""
    for path in _metrics_dir().glob("*.db"):
        pid = path.stem.rsplit("_", 1)[-1]
        if not pid.isdigit() or not _running(int(pid)):
            path.unlink(missing_ok=True)


def child_exit(server, worker) -> None:
    from django.conf import settings
    from prometheus_client import multiprocess

    if settings.METRICS_ENABLED:  # off: no folder, no file of the worker's
        multiprocess.mark_process_dead(worker.pid, settings.PROMETHEUS_MULTIPROC_DIR)


def worker_exit(server, worker) -> None:
    """The requests a worker counted since its last flush (registry.http.metrics)."""
    from registry.http import metrics

    metrics.http_flush()
