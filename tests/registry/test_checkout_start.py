"""A checkout started as `make run` starts it: one environment (.env) for every process and
every manage.py call, a busy port refused before anything is done, a clean start (no broker
warnings, a banner that says what runs), and no file left outside var/ and the ignored
paths."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, free_port_pair

# Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The test run's own settings stay out: the started processes read only the file.
OURS = {"SECRET_KEY", "REGISTRY_BASE_URL", "DEBUG", "DATABASE_URL", "CELERY_TASK_ALWAYS_EAGER"}
OURS |= {"DJANGO_SETTINGS_MODULE", "REGISTRY_ENV_FILE", "REGISTRY_VAR_DIR", "CELERY_BROKER_URL"}
OURS |= {"REGISTRY_PROTOCOL_APPS"}  # a checkout runs with every app


def checkout_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env["PATH"] = f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}"
    env["REGISTRY_ENV_FILE"] = str(tmp_path / ".env")
    return {**env, **extra}


def run(args: list[str], env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def untracked() -> set[str]:
    """The checkout's files git does not know and does not ignore."""
    status = run(["git", "status", "--porcelain", "--untracked-files=all"], dict(os.environ))
    if status.returncode != 0:
        pytest.skip("not a git checkout")
    return {line[3:] for line in status.stdout.splitlines() if line.startswith("??")}


def test_make_run_on_a_busy_port_stops_with_one_line_before_doing_anything(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = checkout_env(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
        made = run(["make", "--no-print-directory", "run", f"PORT={port}"], env)

    assert made.returncode != 0
    assert f"make run: port {port} on 127.0.0.1 is already in use" in made.stderr
    # Nothing ran: no migration, no key, no environment file, no database.
    assert "manage.py" not in made.stdout + made.stderr
    assert not (tmp_path / ".env").exists() and not (tmp_path / "db.sqlite3").exists()


def listening_pair() -> tuple[list[socket.socket], int]:
    """Two sockets listening on consecutive ports, as a running `make run`'s web server and
    event stream do, and the first port."""
    for _ in range(50):
        first = socket.socket()
        first.bind(("127.0.0.1", 0))
        port = first.getsockname()[1]
        second = socket.socket()
        try:
            second.bind(("127.0.0.1", port + 1))
        except OSError:
            first.close()
            second.close()
            continue
        first.listen()
        second.listen()
        return [first, second], port
    pytest.fail("no two consecutive free ports")


def test_a_busy_port_suggests_a_port_pair_that_is_free(capsys):
    from registry import devenv

    sockets, port = listening_pair()
    try:
        assert devenv.main(["127.0.0.1", str(port)]) == 1
        message = capsys.readouterr().err
        # The running instance's event stream is on port+1: the suggestion is past both.
        suggested = int(message.split("make run PORT=")[1].split()[0])
        assert suggested > port + 1
        assert not devenv.port_busy("127.0.0.1", suggested)
        assert not devenv.port_busy("127.0.0.1", suggested + 1)
        # The web port free but the event stream's taken: refused too, naming it.
        assert devenv.main(["127.0.0.1", str(port + 2), str(port + 1)]) == 1
        events_only = capsys.readouterr().err
        assert f"event stream's port {port + 1} on 127.0.0.1 is already in use" in events_only
    finally:
        for listening in sockets:
            listening.close()


def test_manage_py_help_check_and_showmigrations_need_no_secret_key(tmp_path):
    env = checkout_env(tmp_path, REGISTRY_ENV_FILE="", REGISTRY_VAR_DIR=str(tmp_path / "var"))
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    for command in ([], ["help"], ["check"], ["showmigrations", "registry"]):
        done = run([sys.executable, "manage.py", *command], env)
        assert done.returncode == 0, (command, done.stderr)
        assert "SECRET_KEY" not in done.stderr
    assert "create_api_key" in run([sys.executable, "manage.py", "help"], env).stdout
    # A command that serves or signs still refuses to run without one.
    served = run([sys.executable, "manage.py", "runserver", "--noreload"], env, timeout=30)
    assert served.returncode != 0 and "SECRET_KEY is not set" in served.stderr


def test_the_environment_file_serves_every_manage_py_call_as_printed(tmp_path):
    port = free_port_pair()  # (the event stream's is the next one)
    database = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env = checkout_env(tmp_path, DATABASE_URL=database)
    written = run([sys.executable, "-m", "registry.devenv", "127.0.0.1", str(port)], env)
    assert written.returncode == 0, written.stderr
    values = dict(line.split("=", 1) for line in (tmp_path / ".env").read_text().splitlines()[1:])
    assert values["DEBUG"] == "1" and len(values["SECRET_KEY"]) > 50
    assert values["REGISTRY_BASE_URL"] == f"http://127.0.0.1:{port}"
    assert values["DATABASE_URL"] == database
    # Written once: a second run keeps the secret key.
    other = free_port_pair()
    assert (
        run([sys.executable, "-m", "registry.devenv", "127.0.0.1", str(other)], env).returncode == 0
    )
    again = (tmp_path / ".env").read_text()
    assert f"SECRET_KEY={values['SECRET_KEY']}\n" in again and f":{other}\n" in again

    # Without DATABASE_URL, DEBUG or SECRET_KEY in the environment: the file gives them.
    env.pop("DATABASE_URL")
    assert run([sys.executable, "manage.py", "migrate", "--noinput"], env).returncode == 0
    key = run([sys.executable, "manage.py", "create_api_key", "--owner", "me"], env)
    assert key.returncode == 0, key.stderr
    assert key.stdout.strip().splitlines()[-1].startswith("rk_")
    helped = run([sys.executable, "manage.py", "--help"], env)
    assert "[registry]" in helped.stdout and "create_api_key" in helped.stdout
    assert "aap_check" in helped.stdout and "only Django core commands" not in helped.stderr


def test_a_make_run_start_is_clean_and_writes_only_under_var(tmp_path):
    before = untracked()
    port = free_port_pair()
    env = checkout_env(
        tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", HOST="127.0.0.1"
    )
    assert (
        run([sys.executable, "-m", "registry.devenv", "127.0.0.1", str(port)], env).returncode == 0
    )
    env.pop("DATABASE_URL")
    # Every server of the Procfile on a port of its own (the event stream's too).
    env.update(PORT=str(port), EVENTS_PORT=str(free_port()), REGISTRY_VAR_DIR=str(tmp_path / "var"))
    assert run([sys.executable, "manage.py", "migrate", "--noinput"], env).returncode == 0
    log = tmp_path / "honcho.log"
    with log.open("w") as out:
        honcho = subprocess.Popen(
            [str(BIN / "honcho"), "start", "-f", "Procfile"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            text = log.read_text()
            try:
                served = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
            except httpx.HTTPError:
                served = None
            if served == 200 and "ready." in text and "beat: Starting" in text:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"make run's processes did not start:\n{log.read_text()}")
        time.sleep(2)
    finally:
        os.killpg(honcho.pid, signal.SIGTERM)
        honcho.wait(timeout=30)
    text = log.read_text()

    assert "No hostname was supplied" not in text
    assert "concurrency: 1 (solo)" in text
    assert untracked() == before, "the start left files outside var/ and the ignored paths"
    # The job queue's files, its exchange tables too, are under REGISTRY_VAR_DIR.
    assert (tmp_path / "var" / "broker" / "control" / "celery.exchange").is_file()
