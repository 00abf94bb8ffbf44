"""The job engine's configuration: an embedded broker by default, schedules from the apps."""

import subprocess
import sys
from pathlib import Path

from registry import extensions
from registry.celery import app

ROOT = Path(__file__).resolve().parent.parent.parent


def test_without_a_broker_setting_jobs_queue_in_the_filesystem(tmp_path):
    # Settings are read once per process: a fresh one, with neither variable set.
    code = (
        "import django; django.setup(); from registry.celery import app; "
        "print(app.conf.broker_url); "
        "print(app.conf.broker_transport_options['data_folder_in'])"
    )
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "REGISTRY_VAR_DIR": str(tmp_path)}
    env["DJANGO_SETTINGS_MODULE"] = "registry.settings"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["filesystem://", str(tmp_path / "broker")]
    assert (tmp_path / "broker" / "processed").is_dir()


def test_every_registered_schedule_reaches_beat_and_names_a_registered_task():
    app.loader.import_default_modules()  # what a worker does at start: autodiscovery
    app.finalize()
    schedule = app.conf.beat_schedule
    registered = extensions.schedules.read()
    assert set(schedule) == {s.name for s in registered}
    for entry in registered:
        assert schedule[entry.name]["schedule"] == entry.seconds
        assert entry.task in app.tasks
