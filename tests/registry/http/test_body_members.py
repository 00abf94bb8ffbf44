"""One rule for every write body the API reads as a JSON object: a member the endpoint does
not know is a 400 naming it, and a choice that is not one lists the choices; the body
changes nothing."""

import pytest

from registry.agents.models import Agent
from registry.events.models import Subscription

pytestmark = pytest.mark.django_db


def problem_of(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/problem+json"
    return response.json()


@pytest.fixture
def agent(alice, native_payload) -> str:
    return alice.post("/agents", native_payload(), format="json").json()["id"]


def test_a_misspelt_member_of_a_patch_is_400_naming_it_and_changes_nothing(alice, agent):
    body = problem_of(alice.patch(f"/agents/{agent}", {"descripton": "New"}, format="json"))
    assert [e["path"] for e in body["errors"]] == ["descripton"]
    assert "description" in body["errors"][0]["message"]  # the members it takes
    assert Agent.objects.get(pk=agent).description == ""


def test_an_agent_read_with_get_can_be_sent_back_its_read_only_members_ignored(alice, agent):
    read = alice.get(f"/agents/{agent}").json()
    read["description"] = "Changed"
    read["id"] = "00000000-0000-0000-0000-000000000000"  # shown, not written
    read["endpoints"][0]["lastAliveAt"] = "2000-01-01T00:00:00Z"
    put = alice.put(f"/agents/{agent}", read, format="json")
    assert put.status_code == 200, put.content[:500]
    assert put.json()["id"] == agent and put.json()["description"] == "Changed"
    patch = alice.patch(f"/agents/{agent}", {"createdAt": "2000-01-01", "name": "N"}, format="json")
    assert patch.status_code == 200 and patch.json()["createdAt"] != "2000-01-01"


def test_unknown_members_are_named_beside_the_other_problems_with_their_paths(
    alice, native_payload
):
    payload = native_payload(colour="red")
    payload["capabilities"][0]["tagz"] = ["x"]
    payload["endpoints"][0]["adress"] = "https://x.example.com"
    payload["endpoints"][0]["transport"] = "http"
    body = problem_of(alice.post("/agents", payload, format="json"))
    assert {e["path"] for e in body["errors"]} == {
        "colour",
        "capabilities[0].tagz",
        "endpoints[0].adress",
        "endpoints[0].transport",
    }
    assert not Agent.objects.exists()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/agents/{agent}/endpoints", {"nmae": "x"}),
        ("post", "/agents/{agent}/deprecate", {"reason": "old", "sunset": "2030-01-01"}),
        ("post", "/api-keys", {"owner": "alice", "scope": "agent", "expires": 3}),
        ("post", "/subscriptions", {"url": "https://localhost:9/h", "event": ["agent.created"]}),
        pytest.param(
            "post", "/a2a/agents", {"card": {}, "force": True}, marks=pytest.mark.apps("a2a")
        ),
        pytest.param(
            "post",
            "/entities",
            {"domain": "zinc.example", "verify": True},
            marks=pytest.mark.apps("entities"),
        ),
    ],
)
def test_every_write_endpoint_refuses_unknown_members(
    alice, admin_client, agent, settings, method, path, body
):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    client = admin_client if path == "/api-keys" else alice
    answer = getattr(client, method)(path.format(agent=agent), body, format="json")
    problem = problem_of(answer)
    unknown = {"nmae", "sunset", "expires", "event", "force", "verify"}
    assert unknown & {e["path"] for e in problem["errors"]}
    assert not Subscription.objects.exists()


@pytest.mark.apps("a2a")
def test_a_card_keeps_its_unknown_members_and_its_body_does_not(alice, make_card):
    card = make_card(x_extension={"kept": True})
    answer = alice.post("/a2a/agents", {"card": card}, format="json")
    assert answer.status_code == 201, answer.json()
    url = f"/a2a/agents/{answer.json()['id']}"
    assert alice.get(url).json()["x_extension"] == {"kept": True}
    replaced = alice.put(url, {"card": make_card(name="New"), "force": True}, format="json")
    assert [e["path"] for e in problem_of(replaced)["errors"]] == ["force"]
    assert alice.get(url).json()["name"] == "Weather Agent"


@pytest.mark.parametrize(
    ("path", "body", "field", "allowed"),
    [
        ("/agents/{agent}/endpoints", {"transport": "http"}, "transport", "Http, Amqp"),
        ("/agents/{agent}/endpoints", {"protocol": "SOAP"}, "protocol", "A2A, MCP, ACP"),
        ("/agents/{agent}/endpoints", {"livenessModel": "x"}, "livenessModel", "Persistent"),
        ("/api-keys", {"owner": "bob", "scope": "root"}, "scope", "agent, admin"),
    ],
)
def test_a_choice_error_lists_the_choices(
    alice, admin_client, agent, native_payload, path, body, field, allowed
):
    endpoint = {**native_payload()["endpoints"][0], "name": "second", **body}
    client = admin_client if path == "/api-keys" else alice
    payload = body if path == "/api-keys" else endpoint
    problem = problem_of(client.post(path.format(agent=agent), payload, format="json"))
    (error,) = [e for e in problem["errors"] if e["path"] == field]
    assert allowed in error["message"]
    assert f"not '{body[field]}'" in error["message"]


def test_a_choice_error_of_a_nested_member_lists_the_choices(alice, native_payload):
    payload = native_payload()
    payload["endpoints"][0]["transport"] = "http"
    problem = problem_of(alice.post("/agents", payload, format="json"))
    assert problem["errors"] == [
        {
            "path": "endpoints[0].transport",
            "message": "must be one of Http, Amqp, AzureServiceBus, not 'http'",
        }
    ]
