"""Logs: each record once (Django's loggers print through the root handler only), and
one JSON object per line with LOG_FORMAT=json."""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

UVICORN = (sys.executable, "-m", "uvicorn", "registry.events.asgi:application")
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import logging, django
django.setup()
logging.getLogger("django.request").warning("Not Found: /nothing")
logging.getLogger("registry.readyz").error("the cache is down", extra={"check": "cache"})
"""


def run(**env) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "registry.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stderr.splitlines()


@pytest.mark.parametrize("debug", ["0", "1"])
def test_each_log_record_is_written_once(debug):
    lines = run(DEBUG=debug, REGISTRY_BASE_URL="http://127.0.0.1:8000")
    assert lines.count("WARNING django.request: Not Found: /nothing") == 1, lines
    assert lines.count("ERROR registry.readyz: the cache is down") == 1, lines
    assert len(lines) == 2, lines


def test_log_format_json_writes_one_object_per_line():
    lines = run(DEBUG="1", LOG_FORMAT="json")
    records = [json.loads(line) for line in lines]
    assert [(r["level"], r["logger"], r["message"]) for r in records] == [
        ("WARNING", "django.request", "Not Found: /nothing"),
        ("ERROR", "registry.readyz", "the cache is down"),
    ]
    assert records[1]["check"] == "cache"
    assert records[0]["time"].endswith("+00:00")


def test_an_unknown_log_format_stops_the_start():
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run(DEBUG="1", LOG_FORMAT="xml")
    assert "LOG_FORMAT must be 'plain' or 'json'" in failed.value.stderr


def test_the_stream_servers_own_lines_are_json_too(tmp_path):
    """uvicorn sets up its loggers before the app's settings: the settings hand them to
    the root handler, and its access log stays off as the Procfiles start it."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "LOG_FORMAT": "json",
        "REGISTRY_VAR_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "EVENTS_LIVENESS_WATCH_SECONDS": "3600",
    }
    server = subprocess.Popen(
        [*UVICORN, f"--port={port}", "--no-access-log"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        for line in server.stderr:
            lines.append(line)
            if "Uvicorn running" in line:
                httpx.get(f"http://127.0.0.1:{port}/nothing", timeout=5)
                break
    finally:
        server.terminate()
        lines += server.stderr.readlines()
        server.wait(10)
    records = [json.loads(line) for line in lines if line.strip()]
    assert any(r["logger"] == "uvicorn.error" for r in records), lines
    assert not [r for r in records if r["logger"] == "uvicorn.access"]
