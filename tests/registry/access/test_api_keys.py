"""API keys without a shell: create (admin), list (own, never the secret), revoke, rotate,
expiry, last use recorded at most once a minute, every change audited."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from registry.access.auth import api_key_hash
from registry.access.models import ApiKey, AuditEntry

pytestmark = pytest.mark.django_db


def with_key(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def create(admin_client, **body):
    return admin_client.post("/api-keys", {"owner": "carol", **body}, format="json")


def test_an_admin_key_creates_a_key_for_an_owner_shown_once(admin_client, native_payload):
    later = (timezone.now() + timedelta(days=30)).isoformat()
    response = create(admin_client, label="ci", expiresAt=later)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"] == f"/api-keys/{body['id']}"
    assert body["owner"] == "carol"
    assert body["scope"] == "agent"
    assert body["label"] == "ci"
    assert body["active"] is True
    assert body["expiresAt"] is not None
    stored = ApiKey.objects.get(pk=body["id"])
    assert stored.key_hash == api_key_hash(body["key"])
    assert body["key"].startswith(body["prefix"])
    carol = with_key(body["key"])
    created = carol.post("/agents", native_payload(), format="json")
    assert created.status_code == 201
    assert created.json()["owner"] == "carol"
    entry = AuditEntry.objects.get(action="api-key.create")
    assert entry.actor == "ops"
    assert entry.after["owner"] == "carol"
    assert body["key"] not in str(entry.after)


def test_only_admin_keys_create_keys(alice, anon):
    assert alice.post("/api-keys", {"owner": "alice"}, format="json").status_code == 403
    assert anon.post("/api-keys", {"owner": "alice"}, format="json").status_code == 401
    assert ApiKey.objects.filter(owner="alice").count() == 1


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"owner": ""}, "owner"),
        ({}, "owner"),
        ({"owner": "carol", "scope": "root"}, "scope"),
        ({"owner": "carol", "expiresAt": "2001-01-01T00:00:00Z"}, "expiresAt"),
        ({"owner": "carol", "expiresAt": "soon"}, "expiresAt"),
    ],
)
def test_bad_key_requests_are_400_naming_the_field(admin_client, body, path):
    response = admin_client.post("/api-keys", body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert [e["path"] for e in response.json()["errors"]] == [path]


def test_listing_shows_own_keys_never_secrets(alice, bob, admin_client, anon):
    secret = create(admin_client, owner="alice", label="second").json()["key"]
    response = alice.get("/api-keys")
    assert response.status_code == 200
    listed = response.json()["results"]
    assert {k["owner"] for k in listed} == {"alice"}
    assert len(listed) == 2
    assert listed[0]["label"] == "second"  # newest first
    assert "key" not in listed[0]
    assert secret not in response.content.decode()
    assert anon.get("/api-keys").status_code == 401
    assert alice.get("/api-keys", {"owner": "bob"}).status_code == 403
    assert {
        k["owner"] for k in admin_client.get("/api-keys", {"owner": "bob"}).json()["results"]
    } == {"bob"}
    assert alice.get("/api-keys", {"scope": "admin"}).status_code == 400


def test_revoking_own_key_or_as_admin_and_not_others(alice, bob, admin_client):
    alices_key = create(admin_client, owner="alice").json()
    other = create(admin_client, owner="bob").json()
    assert bob.delete(f"/api-keys/{alices_key['id']}").status_code == 404  # not disclosed
    assert alice.delete(f"/api-keys/{other['id']}").status_code == 404
    assert alice.delete(f"/api-keys/{alices_key['id']}").status_code == 204
    assert with_key(alices_key["key"]).post("/agents", {}, format="json").status_code == 401
    assert admin_client.delete(f"/api-keys/{other['id']}").status_code == 204
    assert ApiKey.objects.get(pk=other["id"]).revoked_at is not None
    assert alice.delete(f"/api-keys/{alices_key['id']}").status_code == 204  # again: no change
    revocations = AuditEntry.objects.filter(action="api-key.revoke")
    assert sorted(e.actor for e in revocations) == ["alice", "ops"]
    assert alice.delete("/api-keys/not-a-uuid").status_code == 404


def test_rotation_issues_the_new_key_before_the_old_one_stops(alice, admin_client, native_payload):
    old = create(admin_client, owner="dana", label="deploy").json()
    dana = with_key(old["key"])
    response = dana.post(f"/api-keys/{old['id']}/rotate", {"graceSeconds": 3600}, format="json")
    assert response.status_code == 201, response.json()
    new = response.json()
    assert (new["owner"], new["scope"], new["label"]) == ("dana", "agent", "deploy")
    assert new["key"] != old["key"]
    # During the grace both work; the old one then expires.
    assert dana.post("/agents", native_payload(name="A"), format="json").status_code == 201
    assert (
        with_key(new["key"]).post("/agents", native_payload(name="B"), format="json").status_code
        == 201
    )
    stored = ApiKey.objects.get(pk=old["id"])
    assert stored.revoked_at is None
    assert timedelta(minutes=59) < stored.expires_at - timezone.now() <= timedelta(hours=1)
    assert AuditEntry.objects.filter(action="api-key.rotate", actor="dana").count() == 1
    assert AuditEntry.objects.filter(action="api-key.expire", actor="dana").count() == 1


def test_rotation_without_grace_revokes_the_old_key_at_once(admin_client, native_payload):
    old = create(admin_client, owner="dana").json()
    response = admin_client.post(f"/api-keys/{old['id']}/rotate")
    assert response.status_code == 201
    assert with_key(old["key"]).post("/agents", native_payload(), format="json").status_code == 401
    assert (
        with_key(response.json()["key"])
        .post("/agents", native_payload(), format="json")
        .status_code
        == 201
    )
    again = admin_client.post(f"/api-keys/{old['id']}/rotate")
    assert again.status_code == 409
    assert again.json()["type"] == "/problems/key-inactive"
    too_long = admin_client.post(
        f"/api-keys/{response.json()['id']}/rotate", {"graceSeconds": 10**9}, format="json"
    )
    assert too_long.status_code == 400
    assert too_long.json()["errors"][0]["path"] == "graceSeconds"


def test_expired_keys_are_refused_saying_so(make_key, anon, native_payload):
    raw = make_key("erin")
    ApiKey.objects.filter(key_hash=api_key_hash(raw)).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    response = with_key(raw).post("/agents", native_payload(), format="json")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_last_use_is_recorded_at_most_once_a_minute(make_key, native_payload):
    raw = make_key("gil")
    client = with_key(raw)

    def key_updates() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api-keys").status_code == 200
        return sum(
            1 for q in queries if q["sql"].startswith("UPDATE") and "apikey" in q["sql"].lower()
        )

    assert key_updates() == 1
    first = ApiKey.objects.get(key_hash=api_key_hash(raw)).last_used_at
    assert first is not None
    assert key_updates() == 0
    assert key_updates() == 0
    ApiKey.objects.filter(pk__isnull=False, owner="gil").update(
        last_used_at=timezone.now() - timedelta(seconds=61)
    )
    assert key_updates() == 1


def test_create_api_key_may_set_an_expiry(capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    call_command("create_api_key", "--owner", "hal", "--expires-in-days", "7")
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.objects.get(key_hash=api_key_hash(raw))
    assert timedelta(days=6, hours=23) < key.expires_at - timezone.now() <= timedelta(days=7)
    with pytest.raises(CommandError, match="from 1 to 3650"):
        call_command("create_api_key", "--owner", "hal", "--expires-in-days", "0")
