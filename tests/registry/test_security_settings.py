"""Production settings: what a deployment must set, the headers every page carries, and
``manage.py check --deploy`` clean with the documented production settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "x7Qm2-production-like-secret-key-of-sufficient-length-and-variety-91ab",
    "REGISTRY_BASE_URL": "https://registry.example.com",
    "ALLOWED_HOSTS": "registry.example.com",
    "REGISTRY_HTTPS": "1",
    "REDIS_URL": "redis://127.0.0.1:6379/14",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in PRODUCTION and k != "DJANGO_SETTINGS_MODULE"
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "registry.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


# Commands that sign nothing (help, check) run without a key; these serve, change data or
# judge the deployment's own key.
@pytest.mark.parametrize("command", [["migrate"], ["check", "--deploy"]])
def test_without_a_secret_key_outside_debug_the_registry_does_not_start(command):
    settings = {**PRODUCTION}
    del settings["SECRET_KEY"]

    run = manage(*command, **settings)

    assert run.returncode != 0
    # One line naming the setting and the fix, no traceback.
    assert run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("manage.py: SECRET_KEY is not set: run `make run`")


def test_check_deploy_is_clean_with_the_documented_production_settings():
    run = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert run.returncode == 0, run.stdout + run.stderr


def test_check_deploy_warns_that_rate_limits_are_per_process_without_redis():
    settings = {**PRODUCTION, "REDIS_URL": ""}

    run = manage("check", "--deploy", "--fail-level", "WARNING", **settings)

    assert run.returncode != 0
    assert "registry.W001" in run.stdout + run.stderr


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", [pytest.param("/aap/check", marks=pytest.mark.apps("a2a", "aap")), "/admin/login/"]
)
def test_html_pages_carry_a_content_security_policy_without_inline_code(anon, path):
    response = anon.get(path)

    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "style-src 'self';" in policy
    assert "unsafe-inline" not in policy
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    html = response.content.decode()
    assert "<style" not in html and "<script>" not in html and " style=" not in html


@pytest.mark.django_db
def test_api_answers_carry_no_page_policy_but_the_other_headers(anon):
    response = anon.get("/discover/agents")

    assert "Content-Security-Policy" not in response
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


@pytest.mark.django_db
@pytest.mark.apps("a2a")
def test_the_host_a_request_names_never_ends_up_in_a_stored_card(
    settings, alice, anon, native_payload
):
    settings.ALLOWED_HOSTS = ["*"]
    payload = native_payload(
        endpoints=[
            {"name": "jobs", "transport": "Amqp", "protocol": "A2A", "address": "jobs"},
        ]
    )

    created = alice.post("/agents", payload, format="json", HTTP_HOST="evil.example")

    assert created.status_code == 201, created.content
    card = anon.get(f"/a2a/agents/{created.json()['id']}").content.decode()
    assert "evil.example" not in card
    assert f"{settings.REGISTRY_BASE_URL}/a2a/queue/" in card
