"""The job engine's configuration: an embedded broker by default, schedules from the apps."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

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
    assert run.stdout.split() == ["filesystem://localhost//", str(tmp_path / "broker")]
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


@pytest.mark.postgres
@pytest.mark.django_db
def test_database_create_creates_a_missing_postgresql_database_once(monkeypatch, capsys):
    import uuid

    import psycopg
    from django.db import connection

    name = f"registry_create_{uuid.uuid4().hex[:12]}"
    monkeypatch.setitem(connection.settings_dict, "NAME", name)
    params = {**connection.get_connection_params(), "dbname": "postgres"}
    for private in ("prepare_threshold", "cursor_factory", "context", "options"):
        params.pop(private, None)
    call_command("database_create")
    call_command("database_create")
    assert capsys.readouterr().out.count(f"Created the database '{name}'") == 1
    with psycopg.connect(**params, autocommit=True) as admin:
        query = "SELECT 1 FROM pg_database WHERE datname = %s"
        assert admin.execute(query, [name]).fetchone() == (1,)
        admin.execute(f'DROP DATABASE "{name}"')
