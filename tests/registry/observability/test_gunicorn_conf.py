"""gunicorn.conf.py: a new run of the web server starts its counts afresh, but keeps those
of a job worker that is running (its process writes on)."""

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# Reads no database of the suite: CI's PostgreSQL pass leaves it out.
pytestmark = pytest.mark.database_independent


def test_starting_gunicorn_clears_the_metrics_of_processes_no_longer_running(settings):
    directory = Path(settings.PROMETHEUS_MULTIPROC_DIR)
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    gone = directory / f"counter_{ended}.db"
    kept = directory / f"counter_{os.getpid()}.db"
    gone.write_bytes(b"")
    kept.touch()
    runpy.run_path(str(ROOT / "gunicorn.conf.py"))["on_starting"](None)
    assert not gone.exists() and kept.exists()
