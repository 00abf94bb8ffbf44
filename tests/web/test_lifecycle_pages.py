"""An agent's page shows its deprecation (reason, sunset, successor) and its card's
versions with what changed; a retired agent has no page, and neither list shows it."""

import pytest

from tests.web.helpers import HOSTILE_NAME

pytestmark = pytest.mark.django_db


def test_a_deprecated_agent_has_a_banner_and_its_versions_say_what_changed(
    alice, client, make_card
):
    old = alice.post("/a2a/agents", {"card": make_card(version="1.0.0")}, format="json").json()
    interfaces = [
        {
            "url": "https://new.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    new = alice.post(
        "/a2a/agents", {"card": make_card(supportedInterfaces=interfaces)}, format="json"
    )
    successor = new.json()["id"]
    skills = [{"id": "radar", "name": "Radar", "description": "Rain radar.", "tags": ["rain"]}]
    put = alice.put(
        f"/a2a/agents/{old['id']}",
        {"card": make_card(version="2.0.0", skills=skills)},
        format="json",
    )
    assert put.status_code == 200
    body = {"reason": HOSTILE_NAME, "successor": successor, "sunsetAt": "2030-01-31T00:00:00Z"}
    assert alice.post(f"/agents/{old['id']}/deprecate", body, format="json").status_code == 200

    html = client.get(f"/browse/agents/{old['id']}").content.decode()
    assert 'class="deprecated-banner"' in html and "<strong>Deprecated</strong>" in html
    assert f'href="/browse/agents/{successor}"' in html
    assert '<time datetime="2030-01-31T00:00:00Z">2030-01-31</time>' in html
    assert "<script>alert" not in html  # the reason is text
    assert 'id="versions-title"' in html
    assert f'href="/a2a/agents/{old["id"]}?version=2"' in html
    assert '<span class="breaking">skill-removed</span>: forecast' in html
    assert f'href="/agents/{old["id"]}/versions/1/diff/2"' in html


def test_a_retired_agent_has_no_page_and_is_not_listed(alice, client, make_card):
    agent = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()
    assert alice.delete(f"/agents/{agent['id']}").status_code == 204
    assert client.get(f"/browse/agents/{agent['id']}").status_code == 404
    assert agent["id"] not in client.get("/browse").content.decode()
    assert agent["id"] not in client.get("/").content.decode()
