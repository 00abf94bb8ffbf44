"""The metrics' and request logs' settings (``GET /metrics``: registry/observability/;
docs/operations/monitoring.md), a module of their own so the main one stays short."""

import os
from pathlib import Path

from registry.settings.env import env_bool, env_networks

__all__ = ["LOG_REQUESTS", "METRICS_ALLOWED_ADDRESSES", "METRICS_ENABLED", "METRICS_TOKEN"]

# Off: nothing is counted (no request, statement, cache hit or job), no process writes a
# metrics file, and /metrics is a 404; request ids and logs are kept.
METRICS_ENABLED = env_bool("METRICS_ENABLED", True)


def metrics_dir(var_dir: Path) -> Path:
    """Where every process (web and job workers) writes its counts, for a scrape to add up:
    ``PROMETHEUS_MULTIPROC_DIR``, by default ``metrics/`` in the var dir. Put in the
    environment here, before prometheus-client is imported (it reads it at import). With
    METRICS_ENABLED off, neither: prometheus-client then keeps its (unused) values in memory
    and writes no file."""
    path = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or var_dir / "metrics")
    if not METRICS_ENABLED:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        return path
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    return path


def metrics_dirs(var_dir: Path) -> tuple[Path, Path]:
    """``metrics_dir``, and the folder whose files (and its sub-folders') a scrape adds up:
    METRICS_SCRAPE_DIR, by default the same. Containers each write to a folder of their own
    below a shared one, which the web's scrape reads (deploy/compose.yaml)."""
    path = metrics_dir(var_dir)
    return path, Path(os.environ.get("METRICS_SCRAPE_DIR") or path)


# A bearer of METRICS_TOKEN, or a client at one of METRICS_ALLOWED_ADDRESSES (the client
# address as the rate limits see it: TRUSTED_PROXY_COUNT), may read /metrics; others get 404.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_ADDRESSES = env_networks("METRICS_ALLOWED_ADDRESSES", "127.0.0.1,::1")
# A log line per request Django answers (registry.requests: route, status, duration, the API
# key's prefix); the lean lane's answers are counted in the metrics, not logged.
LOG_REQUESTS = env_bool("LOG_REQUESTS", False)
