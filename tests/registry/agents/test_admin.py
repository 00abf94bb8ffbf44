"""The admin: browse and moderate; agents, endpoints and capabilities are added by the API."""

import pytest

from registry.agents.models import Agent, Capability, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw-123456789"))
    return client


@pytest.mark.parametrize("model", ["agent", "endpoint", "capability"])
def test_the_admin_has_no_add_pages_for_agents_endpoints_or_capabilities(staff, model):
    assert staff.get(f"/admin/registry/{model}/add/").status_code == 403
    response = staff.post(f"/admin/registry/{model}/add/", {"name": "x", "owner": "x"})
    assert response.status_code == 403
    changelist = staff.get(f"/admin/registry/{model}/").content.decode()
    assert f"/admin/registry/{model}/add/" not in changelist
    assert Agent.objects.count() == Endpoint.objects.count() == Capability.objects.count() == 0


def test_an_agents_change_page_offers_no_inline_add_rows(staff, alice, native_payload):
    agent_id = alice.post("/agents", native_payload(), format="json").json()["id"]
    html = staff.get(f"/admin/registry/agent/{agent_id}/change/").content.decode()
    for inline in ("endpoints", "capabilities"):
        assert f'name="{inline}-MAX_NUM_FORMS" value="0"' in html


@pytest.mark.parametrize("model", ["endpoint", "capability"])
def test_the_admin_cannot_delete_endpoints_or_capabilities_past_the_services(
    staff, alice, native_payload, model
):
    agent = alice.post("/agents", native_payload(), format="json").json()
    object_id = agent["endpoints" if model == "endpoint" else "capabilities"][0]["id"]
    listed = alice.get("/discover/agents").content

    assert staff.get(f"/admin/registry/{model}/{object_id}/delete/").status_code == 403
    assert (
        staff.post(f"/admin/registry/{model}/{object_id}/delete/", {"post": "yes"}).status_code
        == 403
    )
    action = {"action": "delete_selected", "_selected_action": [object_id], "post": "yes"}
    staff.post(f"/admin/registry/{model}/", action)
    assert "delete_selected" not in staff.get(f"/admin/registry/{model}/").content.decode()

    assert Endpoint.objects.filter(agent_id=agent["id"]).count() == len(agent["endpoints"])
    assert Capability.objects.filter(agent_id=agent["id"]).count() == len(agent["capabilities"])
    assert alice.get("/discover/agents").content == listed


def test_the_admin_shows_and_filters_each_agents_visibility(staff, alice, native_payload):
    public = alice.post("/agents", native_payload(name="Open Book"), format="json").json()["id"]
    team = alice.post(
        "/agents",
        native_payload(name="Team Ledger", visibility="groups", visibilityGroups=["finance"]),
        format="json",
    ).json()["id"]
    listed = staff.get("/admin/registry/agent/?visibility__exact=groups").content.decode()
    assert "Team Ledger" in listed and "Open Book" not in listed
    assert 'class="field-visibility">Groups<' in listed
    page = staff.get(f"/admin/registry/agent/{team}/change/").content.decode()
    assert "finance" in page
    # Shown, not edited here: a change page's post leaves it as the owner set it.
    assert 'name="visibility"' not in page
    assert Agent.objects.get(pk=public).visibility == "public"
