"""deploy/Dockerfile and deploy/compose.yaml, which no container engine builds here: what
can be checked without one. The compose file runs the Procfile's processes with the
Procfile's commands, sets only variables the configuration reference documents, never
migrates on start; the Dockerfile copies files that exist, and runs as a user that is not
root."""

import re
import secrets
import shlex
from pathlib import Path

import pytest
import yaml

from tests.registry.test_security_settings import manage
from tests.test_settings_reference import REFERENCE, documented

pytestmark = pytest.mark.database_independent

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
DOCKERFILE = (DEPLOY / "Dockerfile").read_text()
# What compose runs beside the registry: the database and the brokers, and the one-off
# migration; the Procfile's `queueagent` is the demo's agent, not the registry's.
INFRASTRUCTURE = {"postgres", "redis", "rabbitmq"}
ONE_OFF = {"migrate"}
DEMO_ONLY = {"queueagent"}
# Where each process listens is the container's business, not the Procfile's.
LISTENING = {"--bind", "--host", "--port"}


def procfile(name: str) -> dict[str, str]:
    lines = (ROOT / name).read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def fixed_words(line: str) -> list[str]:
    """A Procfile command's words that the environment does not fill in."""
    return [w for w in line.split() if "$" not in w and "=" not in w.split("-")[0]]


def registry_services() -> dict[str, dict]:
    return {
        name: service
        for name, service in COMPOSE["services"].items()
        if name not in INFRASTRUCTURE | ONE_OFF
    }


def test_the_compose_services_are_the_procfiles_processes():
    processes = set(procfile("Procfile")) - DEMO_ONLY
    assert set(registry_services()) == processes
    assert set(procfile("Procfile.serve")) <= processes


def test_each_service_runs_its_procfile_command():
    serve, run = procfile("Procfile.serve"), procfile("Procfile")
    for name, service in registry_services().items():
        # The production line where there is one (gunicorn, not the development server).
        line = serve.get(name, run[name])
        command = service["command"]
        assert command[0] == fixed_words(line)[0], name
        expected = [w for w in fixed_words(line) if w not in LISTENING]
        assert [w for w in expected if w not in command] == [], name


def test_every_variable_compose_sets_is_in_the_configuration_reference():
    reference = documented(REFERENCE.read_text())
    names = set()
    for service in registry_services().values():
        names |= set(service.get("environment", {}))
    example = (DEPLOY / "registry.env.example").read_text().splitlines()
    names |= {line.split("=", 1)[0] for line in example if line and not line.startswith("#")}
    assert {"DATABASE_URL", "SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR"} <= names
    assert sorted(names - set(reference)) == []


def test_nothing_migrates_on_start():
    for name, service in COMPOSE["services"].items():
        if name not in ONE_OFF:
            assert "migrate" not in " ".join(service.get("command", [])), name
    assert COMPOSE["services"]["migrate"]["profiles"] == ["migrate"]
    assert "migrate" not in re.findall(r"^(?:CMD|ENTRYPOINT) (.*)$", DOCKERFILE, re.M)[0]


def test_the_web_service_is_checked_on_readyz():
    test = " ".join(COMPOSE["services"]["web"]["healthcheck"]["test"])
    assert "/readyz" in test


def test_every_file_the_dockerfile_copies_exists_and_is_in_the_build_context():
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copied = []
    for line in re.findall(r"^COPY (.*)$", DOCKERFILE, re.M):
        words = [w for w in shlex.split(line) if not w.startswith("--")]
        copied += words[:-1]
    assert "requirements.txt" in copied and "registry" in copied
    for source in copied:
        assert (ROOT / source).exists(), source
        assert not any(Path(source).match(pattern) for pattern in ignored), source
    assert (DEPLOY / "entrypoint.sh").stat().st_mode & 0o111


def test_the_image_runs_as_a_user_that_is_not_root():
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.M)
    assert users and users[-1] not in ("root", "0")


def test_check_deploy_is_clean_with_the_compose_files_environment(tmp_path):
    """The web service's environment and the example env file, its secrets filled in (and
    its folders in the test's)."""
    example = (DEPLOY / "registry.env.example").read_text().splitlines()
    env = dict(line.split("=", 1) for line in example if line and not line.startswith("#"))
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    env["METRICS_TOKEN"] = secrets.token_urlsafe(32)
    web = dict(COMPOSE["services"]["web"]["environment"])
    for folder in ("REGISTRY_VAR_DIR", "PROMETHEUS_MULTIPROC_DIR", "METRICS_SCRAPE_DIR"):
        web[folder] = str(tmp_path / folder.lower())
    run = manage("check", "--deploy", "--fail-level", "WARNING", **{**web, **env, "DEBUG": "0"})
    assert run.returncode == 0, run.stdout + run.stderr
