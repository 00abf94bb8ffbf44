"""The demo data of `make run`, the OpenAPI schema, the docs page and the admin."""

import pytest
from django.core.management import call_command

from registry.access.auth import api_key_hash
from registry.access.models import ApiKey
from registry.agents.models import Agent

pytestmark = pytest.mark.django_db


@pytest.mark.apps("a2a", "aap")
def test_load_demo_loads_agents_once_and_prints_a_working_admin_key(capsys, anon):
    call_command("load_demo")
    first = capsys.readouterr().out.strip().splitlines()
    count = Agent.objects.count()
    # The core's and A2A's demo agents (other apps, such as entities, may add theirs).
    assert Agent.objects.filter(source__in=["native", "a2a-card"]).count() == 5
    assert Agent.objects.filter(name="Demo Motors Dealer Agent").exists()
    call_command("load_demo")
    second = capsys.readouterr().out.strip().splitlines()
    assert Agent.objects.count() == count
    for output in (first, second):
        key = ApiKey.objects.get(key_hash=api_key_hash(output[-1]))
        assert key.is_admin
    for agent in Agent.objects.all():
        if agent.endpoints.filter(protocol="A2A").exists():
            assert anon.get(f"/a2a/agents/{agent.id}").status_code == 200


@pytest.mark.apps("a2a")
def test_openapi_schema_describes_the_api(anon):
    response = anon.get("/api/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    import json

    schema = json.loads(response.content)
    for path in [
        "/agents",
        "/agents/{agent_id}",
        "/a2a/agents",
        "/a2a/agents/{agent_id}",
        "/discover/agents",
        "/agents/{agent_id}/endpoints",
    ]:
        assert path in schema["paths"], path
    assert "post" in schema["paths"]["/agents"]


def test_interactive_docs_page_renders(anon):
    response = anon.get("/api/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


@pytest.mark.apps("a2a")
def test_admin_lists_and_searches_agents(client, django_user_model, capsys):
    call_command("load_demo")
    admin = django_user_model.objects.create_superuser("root", "", "pw-123456789")
    client.force_login(admin)
    response = client.get("/admin/registry/agent/", {"q": "weather"})
    assert response.status_code == 200
    assert b"Weather Agent" in response.content
    assert b"Summarizer" not in response.content
    response = client.get("/admin/registry/agent/", {"source__exact": "native"})
    assert b"Summarizer" in response.content
    agent = Agent.objects.get(name="Weather Agent")
    assert client.get(f"/admin/registry/agent/{agent.id}/change/").status_code == 200
    assert client.get(f"/admin/a2a/carddocument/{agent.id}/change/").status_code == 200


def test_unknown_paths_and_methods_answer_with_problems(anon):
    response = anon.get("/nothing/here")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    response = anon.delete("/discover/agents")
    assert response.status_code in (401, 405)
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.apps("a2a")
def test_problem_types_are_documented(anon):
    body = anon.get("/problems/invalid-card").json()
    assert "agent card" in body["description"]


def test_healthz_answers_ok_without_the_database(anon, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = anon.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_the_docs_page_loads_only_the_registrys_own_static_files(anon):
    import re

    from django.contrib.staticfiles import finders

    html = anon.get("/api/docs").content.decode()
    assets = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+\.(?:js|css|png))["']""", html)
    assert assets, html[:2000]
    assert not re.search(r"https?://|//cdn|jsdelivr|unpkg", html), "a CDN is referenced"
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not a static file"


def test_the_docs_page_has_no_inline_code_and_serves_its_start_up_script(anon):
    import re

    html = anon.get("/api/docs").content.decode()
    assert "<style" not in html
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all(not body.strip() for _, body in scripts), scripts
    [start] = [s for s, _ in scripts if "script=" in s]
    url = re.search(r'src="([^"]+)"', start).group(1).replace("&amp;", "&")
    response = anon.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in response.content
    assert b"/api/schema" in response.content


@pytest.mark.apps("a2a", "aap")
def test_load_demo_prints_and_writes_the_urls_of_the_port_it_serves(capsys, anon, settings):
    settings.REGISTRY_BASE_URL = "http://127.0.0.1:9123"
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "http://127.0.0.1:9123/api/docs" in out
    assert "http://127.0.0.1:9123/admin/" in out
    assert "8000" not in out
    queued = Agent.objects.get(endpoints__transport="Amqp", endpoints__protocol="A2A")
    card = anon.get(f"/a2a/agents/{queued.id}").json()
    urls = [i["url"] for i in card["supportedInterfaces"]]
    assert any(url.startswith("http://127.0.0.1:9123/a2a/queue/") for url in urls), urls
    for agent in anon.get("/discover/agents").json()["results"]:
        if agent.get("cardUrl"):
            assert agent["cardUrl"].startswith("http://127.0.0.1:9123/a2a/agents/")


def make_env() -> dict[str, str]:
    """The environment for a make of its own: none of the calling make's (make test)."""
    import os

    skip = {"REGISTRY_BASE_URL", "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"}
    return {k: v for k, v in os.environ.items() if k not in skip}


def test_make_run_serves_and_writes_urls_with_its_port(tmp_path, monkeypatch):
    import subprocess
    from pathlib import Path

    from registry import devenv

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", "PORT=9123", "HOST=0.0.0.0"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=make_env(),
    )
    # The port is checked and the environment file written first, for that host and port.
    assert done.stdout.splitlines()[0].endswith("-m registry.devenv 0.0.0.0 9123 9124")
    monkeypatch.delenv("REGISTRY_BASE_URL")
    written = devenv.write(tmp_path / ".env", "0.0.0.0", 9123)
    assert written["REGISTRY_BASE_URL"] == "http://127.0.0.1:9123"
    assert "HOST=0.0.0.0" in done.stdout
    assert "PORT=9123" in done.stdout


def test_make_without_a_target_lists_the_targets():
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        ["make", "--no-print-directory"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env=make_env(),
    )
    lines = done.stdout.splitlines()
    assert "PORT" in lines[0] and "WORKERS" in lines[0]
    listed = {line.split()[0] for line in lines[1:]}
    assert {"help", "run", "test", "serve", "worker", "beat", "migrate", "lint"} <= listed
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines[1:]), lines
    # Every description starts in one column, past the longest target's name.
    starts = {len(line) - len(line.split(maxsplit=1)[1]) for line in lines[1:]}
    assert len(starts) == 1, lines


def openapi(anon) -> dict:
    import json

    response = anon.get("/api/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return json.loads(response.content)


def test_the_schema_documents_problem_responses_with_the_problem_schema(anon):
    schema = openapi(anon)
    problem = {"$ref": "#/components/schemas/Problem"}
    assert set(schema["components"]["schemas"]["Problem"]["properties"]) == {
        "type",
        "title",
        "status",
        "detail",
        "errors",
        "requestId",
    }
    patch = schema["paths"]["/agents/{agent_id}"]["patch"]["responses"]
    assert {"400", "401", "403", "404", "409", "413", "429"} <= set(patch)
    for status in ("400", "401", "403", "404", "409", "413", "429"):
        assert patch[status]["content"] == {"application/problem+json": {"schema": problem}}
    listing = schema["paths"]["/discover/agents"]["get"]["responses"]
    assert {"400", "429"} <= set(listing)
    # Reads need no key (none or one), but a key sent is checked: an unknown one is a 401.
    assert schema["paths"]["/discover/agents"]["get"]["security"] == [{}, {"apiKey": []}]
    assert "401" in listing and "403" not in listing
    assert "404" in schema["paths"]["/agents/{agent_id}"]["get"]["responses"]
    assert "401" in schema["paths"]["/api-keys"]["get"]["responses"]


def test_schema_component_names_are_readable(anon):
    names = set(openapi(anon)["components"]["schemas"])
    assert {"AgentRequest", "EndpointRequest", "CapabilityRequest", "TransportEnum"} <= names
    assert not [n for n in names if "InputRequest" in n or n.endswith("RequestRequest")]
    assert not [n for n in names if n in {"StatusEnum", "LevelEnum", "CategoryEnum"}]
    assert len([n for n in names if "Transport" in n]) == 1


@pytest.mark.apps("a2a")
def test_card_registration_documents_both_200_and_201(anon):
    responses = openapi(anon)["paths"]["/a2a/agents"]["post"]["responses"]
    assert {"200", "201"} <= set(responses)
    agent = {"$ref": "#/components/schemas/Agent"}
    assert responses["200"]["content"]["application/json"]["schema"] == agent
    assert responses["201"]["content"]["application/json"]["schema"] == agent


def test_schema_generation_has_no_warnings():
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
