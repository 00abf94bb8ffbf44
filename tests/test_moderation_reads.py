"""Quarantine across the apps' public reads: the card and its versions (and the processes'
card caches: another process's decision is seen within a second), the MCP and A2A faces,
the AI Catalog and ARD, the pages; kept for the owner and staff, back when released."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from protocols.a2a.face.skills import discover
from protocols.mcp.tools import _card
from tests.protocols.a2a.serving.test_card_cache import cached  # noqa: F401
from tests.registry.fastpath.test_lean import Recorder, call

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def weather(alice, make_card) -> str:
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    card = make_card(version="2.2.0", description="Now with hail.")
    assert alice.put(f"/a2a/agents/{agent_id}", {"card": card}, format="json").status_code == 200
    return agent_id


def _catalog_ids(anon) -> str:
    return anon.get("/.well-known/ai-catalog.json").content.decode()


@pytest.mark.django_db
@pytest.mark.apps("ard", "mcp_face")
def test_a_quarantined_agents_card_catalog_faces_and_pages_are_withheld(
    admin_client, alice, anon, client, django_user_model, weather
):
    assert weather in _catalog_ids(anon)
    assert len(anon.get("/ard/agents").json()["items"]) == 1
    answer = admin_client.post(
        f"/agents/{weather}/quarantine", {"reason": "impersonates a brand"}, format="json"
    )
    assert answer.status_code == 200

    for path in (
        f"/a2a/agents/{weather}",
        f"/a2a/agents/{weather}?version=1",
        f"/a2a/agents/{weather}?version=2.2.0",
    ):
        response = anon.get(path)
        assert response.status_code == 404, path
        assert response.json()["type"].endswith("/problems/unlisted")
        assert response["Cache-Control"] == "no-store"
    assert anon.get(f"/agents/{weather}/versions").status_code == 404
    assert alice.get(f"/agents/{weather}/versions").status_code == 200  # its owner's
    assert _card(weather)[1]["type"].endswith("/problems/unlisted")  # MCP get_agent_card
    assert discover({"q": "Weather"}).data["agents"] == []  # the A2A and MCP discovery skill
    assert weather not in _catalog_ids(anon)
    assert anon.get("/ard/agents").json()["items"] == []
    assert anon.get(f"/browse/agents/{weather}").status_code == 404
    assert weather not in anon.get("/browse", {"q": "Weather"}).content.decode()

    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-123456789"))
    staff_view = client.get(f"/browse/agents/{weather}")
    assert staff_view.status_code == 200 and b"Not publicly listed" in staff_view.content
    assert staff_view["Cache-Control"] == "private, no-store"
    queue = client.get("/admin/registry/moderation/?quarantined=yes").content.decode()
    assert "Weather Agent" in queue

    assert admin_client.delete(f"/agents/{weather}/quarantine").status_code == 200
    assert json.loads(anon.get(f"/a2a/agents/{weather}").content)["version"] == "2.2.0"
    assert anon.get(f"/a2a/agents/{weather}?version=1").status_code == 200
    assert weather in _catalog_ids(anon)
    assert [a["id"] for a in discover({"q": "Weather"}).data["agents"]] == [weather]


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgresql://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY")
@pytest.mark.django_db(transaction=True)
def test_another_process_quarantine_reaches_this_process_card_cache_within_a_second(
    cached,  # noqa: F811
    weather,
):
    """A moderator's command in another process; this process's lean lane, which answered
    the card (and a pinned version) from its cache, answers 404 within a second."""
    from registry.fastpath.lean import LeanApplication

    app = LeanApplication(Recorder())
    paths = [f"/a2a/agents/{weather}", f"/a2a/agents/{weather}?version=1"]
    for path in paths:
        assert call(app, "GET", path)[0] == 200
        assert call(app, "GET", path)[0] == 200  # now from the cache
    assert cached.spool.get(weather) is not None
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "tests.settings",
    }
    subprocess.run(
        [sys.executable, "manage.py", "agent_quarantine", weather, "--reason", "phishing"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    committed = time.monotonic()
    while any(call(app, "GET", path)[0] == 200 for path in paths):
        assert time.monotonic() - committed < 1.0, "the cache still answers the card"
        time.sleep(0.01)
    assert [call(app, "GET", path)[0] for path in paths] == [404, 404]


@pytest.mark.django_db
@pytest.mark.apps("mcp_face")
def test_a_quarantined_agents_mcp_server_card_and_registry_entry_are_withheld(
    admin_client, alice, anon, native_payload
):
    """The served server card answers 404 unlisted; the MCP Registry API shows the server
    deleted to a mirror following updated_since, and no server while it is quarantined;
    released, both are back."""
    payload = native_payload(name="Orders", description="Orders tools for shops.")
    payload["endpoints"][0].update(protocol="MCP", name="mcp", address="https://orders.example/mcp")
    agent = alice.post("/agents", payload, format="json").json()
    card_url = agent["endpoints"][0]["serverCardUrl"].removeprefix("http://testserver")
    assert anon.get(card_url).status_code == 200
    [listed] = anon.get("/v0.1/servers").json()["servers"]
    official = "io.modelcontextprotocol.registry/official"
    before = listed["_meta"][official]["updatedAt"]

    quarantined = admin_client.post(
        f"/agents/{agent['id']}/quarantine", {"reason": "malware"}, format="json"
    )
    assert quarantined.status_code == 200
    withheld = anon.get(card_url)
    assert withheld.status_code == 404
    assert withheld.json()["type"].endswith("/problems/unlisted")
    assert withheld["Cache-Control"] == "no-store"
    assert anon.get("/v0.1/servers").json()["servers"] == []
    [gone] = anon.get("/v0.1/servers", {"updated_since": before}).json()["servers"]
    assert gone["_meta"][official]["status"] == "deleted"

    assert admin_client.delete(f"/agents/{agent['id']}/quarantine").status_code == 200
    assert anon.get(card_url).status_code == 200
    [back] = anon.get("/v0.1/servers").json()["servers"]
    assert back["_meta"][official]["status"] == "active"
