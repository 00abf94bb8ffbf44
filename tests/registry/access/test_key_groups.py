"""Groups on API keys: an admin key gives a key its groups (at creation or later), the
key's requests carry them as a token's group claim does, and every change is audited."""

import pytest

from registry.access.auth import principal_for_key
from registry.access.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_an_admin_key_creates_a_key_with_groups_its_requests_carry(admin_client):
    created = admin_client.post(
        "/api-keys", {"owner": "carol", "groups": ["sales", "ops", "sales"]}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["groups"] == ["ops", "sales"]
    assert principal_for_key(created.json()["key"]).groups == ("ops", "sales")


def test_an_admin_key_changes_a_keys_groups_and_it_is_audited(admin_client, make_key):
    raw = make_key("carol")
    key_id = str(principal_for_key(raw).key.pk)
    changed = admin_client.patch(f"/api-keys/{key_id}", {"groups": ["finance"]}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["groups"] == ["finance"]
    assert principal_for_key(raw).groups == ("finance",)
    entry = AuditEntry.objects.get(action="api-key.groups")
    assert (entry.before["groups"], entry.after["groups"]) == ([], ["finance"])
    rotated = admin_client.post(f"/api-keys/{key_id}/rotate", {}, format="json").json()
    assert rotated["groups"] == ["finance"]


def test_an_agent_key_may_not_give_groups_not_even_to_its_own_keys(client_for, make_key):
    owner = client_for("carol")
    key_id = str(principal_for_key(make_key("carol")).key.pk)
    response = owner.patch(f"/api-keys/{key_id}", {"groups": ["admins"]}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"][0]["path"] == "groups"


@pytest.mark.parametrize(
    "groups", [["x" * 201], "sales", [{"name": "sales"}], ["g"] * 201], ids=str
)
def test_bad_groups_are_a_400_naming_the_field(admin_client, make_key, groups):
    key_id = str(principal_for_key(make_key("carol")).key.pk)
    response = admin_client.patch(f"/api-keys/{key_id}", {"groups": groups}, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"].startswith("groups")
