"""The audit log: every write, who made it, and what changed."""

import pytest
from django.core.management import call_command

from registry.access.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.mark.apps("a2a")
def test_every_api_write_is_logged_with_its_actor(alice, native_payload, make_card):
    agent = alice.post("/agents", native_payload(), format="json").json()
    alice.patch(f"/agents/{agent['id']}", {"name": "Renamed"}, format="json")
    endpoint = alice.post(
        f"/agents/{agent['id']}/endpoints",
        {"name": "mcp", "transport": "Http", "protocol": "MCP", "address": "https://m.example"},
        format="json",
    ).json()
    alice.delete(f"/agents/{agent['id']}/endpoints/{endpoint['id']}")
    card_agent = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()
    alice.put(f"/a2a/agents/{card_agent['id']}", {"card": make_card(name="W2")}, format="json")
    alice.delete(f"/agents/{agent['id']}")

    entries = list(AuditEntry.objects.order_by("id"))
    assert [e.action for e in entries] == [
        "agent.create",
        "agent.update",
        "endpoint.add",
        "endpoint.remove",
        "agent.create",
        "agent.replace-card",
        "agent.retire",
    ]
    assert {e.actor for e in entries} == {"alice"}
    update = entries[1]
    assert update.before["name"] == "Summarizer"
    assert update.after["name"] == "Renamed"
    assert entries[-1].object_repr == "Renamed"
    assert entries[-1].before == {"status": "active"}
    assert entries[-1].after["status"] == "retired"
    assert str(entries[-1].agent_id) == agent["id"]


def test_refused_writes_leave_no_entry(alice, bob, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    count = AuditEntry.objects.count()
    assert bob.delete(f"/agents/{agent['id']}").status_code == 403
    assert alice.post("/agents", {"name": ""}, format="json").status_code == 400
    assert AuditEntry.objects.count() == count


def test_commands_are_logged_as_such(capsys):
    call_command("create_api_key", "--owner", "zoe")
    entry = AuditEntry.objects.get()
    assert entry.action == "api-key.create"
    assert entry.actor == "cli:create_api_key"
    assert entry.after["owner"] == "zoe"


def test_the_audit_log_is_visible_in_the_admin(client, django_user_model, alice, native_payload):
    alice.post("/agents", native_payload(), format="json")
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-1234567"))
    response = client.get("/admin/registry/auditentry/")
    assert response.status_code == 200
    assert b"agent.create" in response.content
    assert b"alice" in response.content


def test_admin_deletes_go_through_the_service_and_are_logged(
    client, django_user_model, alice, native_payload
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-1234567"))
    response = client.post(f"/admin/registry/agent/{agent['id']}/delete/", {"post": "yes"})
    assert response.status_code == 302
    entry = AuditEntry.objects.filter(action="agent.delete").get()
    assert entry.actor == "admin:root"
