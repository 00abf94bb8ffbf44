"""API keys: who may write, and the key management command."""

import pytest
from django.core.management import call_command

from registry.access.auth import api_key_hash
from registry.access.models import ApiKey
from registry.agents.models import Agent

pytestmark = pytest.mark.django_db


def test_writes_without_a_key_are_401_problems(anon, native_payload):
    response = anon.post("/agents", native_payload(), format="json")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/not-authenticated"
    assert Agent.objects.count() == 0


def test_an_unknown_key_is_401(anon, native_payload):
    anon.credentials(HTTP_AUTHORIZATION="Bearer rk_not-a-real-key")
    assert anon.post("/agents", native_payload(), format="json").status_code == 401


def test_x_api_key_header_works(make_key, anon, native_payload):
    anon.credentials(HTTP_X_API_KEY=make_key("carol"))
    response = anon.post("/agents", native_payload(), format="json")
    assert response.status_code == 201
    assert response.json()["owner"] == "carol"


def test_reads_are_public(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    assert anon.get(f"/agents/{agent['id']}").status_code == 200
    assert anon.get("/discover/agents").status_code == 200


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_other_owners_get_403_and_nothing_changes(alice, bob, native_payload, method):
    agent = alice.post("/agents", native_payload(), format="json").json()
    response = getattr(bob, method)(
        f"/agents/{agent['id']}", native_payload(name="Mine now"), format="json"
    )
    assert response.status_code == 403
    assert Agent.objects.get(pk=agent["id"]).name == "Summarizer"


def test_other_owners_cannot_touch_endpoints(alice, bob, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    endpoint_id = agent["endpoints"][0]["id"]
    assert bob.delete(f"/agents/{agent['id']}/endpoints/{endpoint_id}").status_code == 403
    assert bob.post(f"/agents/{agent['id']}/endpoints", {}, format="json").status_code == 403


def test_admin_keys_may_change_any_agent_and_register_for_others(
    alice, admin_client, native_payload
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    response = admin_client.patch(f"/agents/{agent['id']}", {"name": "Moderated"}, format="json")
    assert response.status_code == 200
    response = admin_client.post("/agents", native_payload(owner="dave"), format="json")
    assert response.json()["owner"] == "dave"


def test_agent_keys_may_not_register_for_others(alice, native_payload):
    response = alice.post("/agents", native_payload(owner="dave"), format="json")
    assert response.status_code == 403
    assert response.json()["errors"][0]["path"] == "owner"


def test_create_api_key_prints_the_key_alone_on_the_last_line(capsys, anon, native_payload):
    call_command("create_api_key", "--owner", "erin", "--admin")
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.objects.get(key_hash=api_key_hash(raw))
    assert key.owner == "erin"
    assert key.is_admin
    assert raw not in {k.key_hash for k in ApiKey.objects.all()}  # stored hashed only
    anon.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert anon.post("/agents", native_payload(), format="json").status_code == 201


def test_revoked_keys_are_refused(make_key, anon, native_payload):
    raw = make_key("frank")
    ApiKey.objects.filter(key_hash=api_key_hash(raw)).update(revoked_at="2026-01-01T00:00:00Z")
    anon.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert anon.post("/agents", native_payload(), format="json").status_code == 401
