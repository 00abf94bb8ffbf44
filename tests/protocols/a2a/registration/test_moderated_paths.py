"""The moderators' decisions on the A2A paths: under review a card registered by the API,
or in bulk, waits unlisted (its card URL 404 ``unlisted``) until approved; verified
publishers' agents carry trust.verifiedPublisher, are a filter and a facet, skip review,
and their names are protected from look-alikes."""

import pytest

from protocols.a2a.registration.bulk import cards_bulk_import

pytestmark = pytest.mark.django_db


def _interface(url: str) -> list[dict]:
    return [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]


def test_under_review_cards_wait_unlisted_on_every_a2a_path(
    settings, admin_client, alice, anon, make_card
):
    settings.REGISTRY_ADMISSION = "review"
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    card = anon.get(f"/a2a/agents/{agent_id}")
    assert card.status_code == 404 and card.json()["type"].endswith("/problems/unlisted")
    assert alice.get(f"/agents/{agent_id}/versions").status_code == 200
    cards = [
        make_card(name=f"Bulk {n}", supportedInterfaces=_interface(f"https://b{n}.example/a2a"))
        for n in range(3)
    ]
    assert cards_bulk_import(owner="bob", cards=cards) == 3
    assert anon.get("/discover/agents").json()["results"] == []
    queue = admin_client.get("/moderation").json()["items"]
    assert len(queue) == 4 and {i["admission"] for i in queue} == {"pending"}
    admin_client.post(f"/agents/{agent_id}/approve", {}, format="json")
    assert anon.get(f"/a2a/agents/{agent_id}").status_code == 200
    assert [a["id"] for a in anon.get("/discover/agents").json()["results"]] == [agent_id]


@pytest.mark.apps("ard")
def test_a_verified_publisher_is_marked_filtered_counted_and_protected(
    settings, admin_client, alice, bob, anon, make_card
):
    acme = make_card(
        name="Acme Travel", supportedInterfaces=_interface("https://a2a.acme.example/v1")
    )
    other = make_card(name="Weather Agent")
    acme_id = alice.post("/a2a/agents", {"card": acme}, format="json").json()["id"]
    other_id = alice.post("/a2a/agents", {"card": other}, format="json").json()["id"]
    marked = admin_client.put(
        "/publishers/acme.example/verified", {"reason": "Contract signed"}, format="json"
    )
    assert marked.status_code == 200
    assert (marked.json()["kind"], marked.json()["agents"]) == ("domain", 1)
    assert anon.get(f"/agents/{acme_id}").json()["trust"]["verifiedPublisher"] is True
    assert anon.get(f"/agents/{other_id}").json()["trust"]["verifiedPublisher"] is False
    catalog = anon.get("/.well-known/ai-catalog.json").json()["entries"]
    marks = {e.get("displayName"): e.get("metadata", {}).get("verifiedPublisher") for e in catalog}
    assert marks["Acme Travel"] is True and marks["Weather Agent"] is None
    page = anon.get(f"/browse/agents/{acme_id}").content.decode()
    assert "Verified publisher" in page
    found = anon.get("/discover/agents", {"verifiedPublisher": "true"}).json()["results"]
    assert [a["id"] for a in found] == [acme_id]
    counts = anon.get("/discover/agents", {"facets": "verifiedPublisher"}).json()["facets"]
    assert {f["value"]: f["count"] for f in counts["verifiedPublisher"]} == {"true": 1}

    spoof = make_card(
        name="Acme Tr\u0430vel", supportedInterfaces=_interface("https://acme-travel.example/a")
    )
    spoof_id = bob.post("/a2a/agents", {"card": spoof}, format="json").json()["id"]
    findings = bob.get(f"/agents/{spoof_id}/moderation").json()["findings"]
    assert [f["rule"] for f in findings] == ["confusable-name"]

    settings.REGISTRY_ADMISSION = "review"
    more = make_card(name="Acme Hotels", supportedInterfaces=_interface("https://h.acme.example/a"))
    more_id = alice.post("/a2a/agents", {"card": more}, format="json").json()["id"]
    assert anon.get(f"/a2a/agents/{more_id}").status_code == 200  # skipped review

    assert admin_client.delete("/publishers/acme.example/verified").status_code == 204
    assert anon.get(f"/agents/{acme_id}").json()["trust"]["verifiedPublisher"] is False
    assert admin_client.get("/publishers").json()["items"] == []
    assert (
        alice.put("/publishers/acme.example/verified", {"reason": "x"}, format="json").status_code
        == 403
    )
