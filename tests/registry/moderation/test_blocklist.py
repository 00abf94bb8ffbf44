"""The blocklist: entries refuse every native write they match (422 ``blocked``, the reason
shown, never the pattern), and quarantine what they match once added."""

from datetime import timedelta

import pytest
from django.utils import timezone

from registry.moderation.models import BlockEntry

pytestmark = pytest.mark.django_db


def _block(admin_client, kind, value, reason="phishing kit", **extra):
    body = {"kind": kind, "value": value, "reason": reason, **extra}
    return admin_client.post("/blocklist", body, format="json")


def _endpoint(address: str) -> dict:
    return {"name": "primary", "transport": "Http", "protocol": "A2A", "address": address}


def _refusal(response, path: str) -> None:
    assert response.status_code == 422, response.content
    problem = response.json()
    assert problem["type"].endswith("/problems/blocked")
    assert "phishing kit" in problem["detail"]
    assert [e["path"] for e in problem["errors"]] == [path]


@pytest.mark.parametrize(
    ("kind", "value", "address"),
    [
        ("domain", "Evil.Example", "https://login.evil.example/a2a"),
        ("domain", "evil.example", "https://evil.example:8443/a2a"),
        ("host", "api.bad.example", "https://api.bad.example/a2a"),
        (
            "url-prefix",
            "https://shared.example/tenants/bad/",
            "https://shared.example/tenants/bad/x",
        ),
    ],
)
def test_an_entry_refuses_each_native_write_of_an_endpoint_it_matches(
    admin_client, alice, native_payload, kind, value, address
):
    assert _block(admin_client, kind, value).status_code == 201
    created = alice.post("/agents", native_payload(endpoints=[_endpoint(address)]), format="json")
    _refusal(created, "endpoints[0].address")
    assert value.lower() not in created.content.decode().lower()  # the reason, not the pattern
    agent = alice.post("/agents", native_payload(), format="json").json()
    _refusal(
        alice.post(
            f"/agents/{agent['id']}/endpoints", {**_endpoint(address), "name": "two"}, format="json"
        ),
        "endpoints[1].address",
    )
    _refusal(
        alice.patch(f"/agents/{agent['id']}", {"endpoints": [_endpoint(address)]}, format="json"),
        "endpoints[0].address",
    )


def test_an_entry_does_not_refuse_look_alike_hosts(admin_client, alice, native_payload):
    _block(admin_client, "domain", "evil.example")
    for address in ("https://notevil.example/a2a", "https://evil.example.com/a2a"):
        payload = native_payload(endpoints=[_endpoint(address)])
        assert alice.post("/agents", payload, format="json").status_code == 201, address


def test_an_owner_entry_refuses_the_owner_and_a_move_to_it(
    admin_client, client_for, alice, native_payload
):
    _block(admin_client, "owner", "mallory")
    _refusal(client_for("mallory").post("/agents", native_payload(), format="json"), "owner")
    agent = alice.post("/agents", native_payload(), format="json").json()
    moved = admin_client.patch(f"/agents/{agent['id']}", {"owner": "mallory"}, format="json")
    _refusal(moved, "owner")


def test_adding_an_entry_quarantines_the_agents_it_matches_in_a_job(
    admin_client, alice, anon, native_payload, django_capture_on_commit_callbacks
):
    bad = alice.post(
        "/agents",
        native_payload(name="Bad", endpoints=[_endpoint("https://x.evil.example/a")]),
        format="json",
    ).json()
    good = alice.post("/agents", native_payload(name="Good"), format="json").json()
    with django_capture_on_commit_callbacks(execute=True):
        entry = _block(admin_client, "domain", "evil.example").json()
    assert entry["quarantined"] is None  # the job runs once the entry commits
    listed = admin_client.get("/blocklist").json()["items"]
    assert [(e["id"], e["quarantined"]) for e in listed] == [(entry["id"], 1)]
    assert anon.get(f"/agents/{bad['id']}").status_code == 404
    assert anon.get(f"/agents/{good['id']}").status_code == 200
    moderation = alice.get(f"/agents/{bad['id']}/moderation").json()
    assert moderation["quarantined"] and moderation["quarantineReason"] == "Blocked: phishing kit"


def test_expired_and_removed_entries_refuse_nothing(admin_client, alice, native_payload):
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    _block(admin_client, "owner", "alice", expiresAt=past)
    assert alice.post("/agents", native_payload(), format="json").status_code == 201
    entry = _block(admin_client, "owner", "alice").json()
    _refusal(alice.post("/agents", native_payload(name="Two"), format="json"), "owner")
    assert admin_client.delete(f"/blocklist/{entry['id']}").status_code == 204
    assert alice.post("/agents", native_payload(name="Three"), format="json").status_code == 201
    assert admin_client.delete(f"/blocklist/{entry['id']}").status_code == 404


def test_entries_are_for_admin_keys_and_checked(admin_client, alice):
    assert _block(alice, "owner", "bob").status_code == 403
    bad = _block(admin_client, "host", "not a host/")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "value"
    wrong = _block(admin_client, "cidr", "10.0.0.0/8")
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["path"] == "kind"
    digest = _block(admin_client, "digest", "SHA256:" + "AB" * 32)
    assert digest.status_code == 201 and digest.json()["value"] == "ab" * 32
    assert BlockEntry.objects.count() == 1
