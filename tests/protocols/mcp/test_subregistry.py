"""The MCP Registry API, read-only: /v0.1/servers and each server's versions, every answer
valid against the official OpenAPI document and server.schema.json; names in the
reverse-DNS namespaces, versions the agent's, the lifecycle as active, deprecated, deleted."""

import json
from urllib.parse import quote

import pytest

from tests.protocols.mcp.official import errors, openapi_validator, server_json_validator

pytestmark = pytest.mark.django_db
OFFICIAL = "io.modelcontextprotocol.registry/official"


def mcp_agent(client, native_payload, name: str, **overrides) -> dict:
    payload = native_payload(name=name, description=f"{name}: tools for shops.", **overrides)
    payload["endpoints"][0].update(
        protocol="MCP", name="mcp", address=f"https://{name.lower()}.example/mcp"
    )
    response = client.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def valid_list(response) -> dict:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    document = json.loads(response.content)
    assert errors(openapi_validator("ServerList"), document) == []
    for item in document["servers"]:
        assert errors(server_json_validator(), item["server"]) == []
    return document


def names(document: dict) -> list[str]:
    return [
        item["server"]["name"].split("/", 1)[1].rsplit("-", 1)[0] for item in document["servers"]
    ]


def test_the_list_pages_with_a_cursor_in_name_order(anon, alice, native_payload):
    for name in ("Delta", "Alpha", "Charlie", "Bravo", "Echo"):
        mcp_agent(alice, native_payload, name, version="1.0.0")
    first = valid_list(anon.get("/v0.1/servers", {"limit": 2}))
    assert names(first) == ["Alpha", "Bravo"] and first["metadata"]["count"] == 2
    second = valid_list(
        anon.get("/v0.1/servers", {"limit": 2, "cursor": first["metadata"]["nextCursor"]})
    )
    assert names(second) == ["Charlie", "Delta"]
    last = valid_list(
        anon.get("/v0.1/servers", {"limit": 2, "cursor": second["metadata"]["nextCursor"]})
    )
    assert names(last) == ["Echo"] and "nextCursor" not in last["metadata"]
    item = first["servers"][0]
    assert item["server"]["remotes"] == [
        {"type": "streamable-http", "url": "https://alpha.example/mcp"}
    ]
    assert item["_meta"][OFFICIAL]["status"] == "active"
    assert item["_meta"][OFFICIAL]["isLatest"] is True
    assert valid_list(anon.get("/v0.1/servers", {"search": "CHAR"}))["servers"][0]["server"][
        "name"
    ].startswith("testserver/Charlie-")


def test_versions_are_the_agents_and_latest_follows_the_newest(anon, alice, native_payload):
    agent = mcp_agent(alice, native_payload, "Weather", version="1.0.0")
    [item] = valid_list(anon.get("/v0.1/servers"))["servers"]
    name = item["server"]["name"]
    # The registry's extras under its own reverse-DNS key.
    assert item["_meta"]["testserver/registry"]["agentId"] == agent["id"]
    assert (
        alice.patch(f"/agents/{agent['id']}", {"version": "1.1.0"}, format="json").status_code
        == 200
    )
    versions = valid_list(anon.get(f"/v0.1/servers/{quote(name, safe='')}/versions"))
    assert [
        (i["server"]["version"], i["_meta"][OFFICIAL]["isLatest"]) for i in versions["servers"]
    ] == [
        ("1.0.0", False),
        ("1.1.0", True),
    ]
    latest = valid_list(anon.get("/v0.1/servers", {"version": "latest"}))["servers"]
    assert [i["server"]["version"] for i in latest] == ["1.1.0"]
    for version, expected in (("latest", "1.1.0"), ("1.0.0", "1.0.0")):
        response = anon.get(f"/v0.1/servers/{quote(name, safe='')}/versions/{version}")
        assert response.status_code == 200
        one = json.loads(response.content)
        assert errors(openapi_validator("ServerResponse"), one) == []
        assert one["server"]["version"] == expected
    exact = valid_list(anon.get("/v0.1/servers", {"version": "1.0.0"}))["servers"]
    assert [i["server"]["version"] for i in exact] == ["1.0.0"]


def test_deprecation_and_retirement_show_in_the_lifecycle_and_the_change_feed(
    anon, alice, native_payload
):
    agent = mcp_agent(alice, native_payload, "Orders", version="2.0.0")
    before = valid_list(anon.get("/v0.1/servers"))["servers"][0]["_meta"][OFFICIAL]["updatedAt"]
    deprecated = alice.post(
        f"/agents/{agent['id']}/deprecate", {"reason": "Use Orders v3."}, format="json"
    )
    assert deprecated.status_code == 200, deprecated.content
    [item] = valid_list(anon.get("/v0.1/servers", {"updated_since": before}))["servers"]
    official = item["_meta"][OFFICIAL]
    assert (official["status"], official["statusMessage"]) == ("deprecated", "Use Orders v3.")
    assert alice.delete(f"/agents/{agent['id']}").status_code == 204
    assert valid_list(anon.get("/v0.1/servers"))["servers"] == []
    [gone] = valid_list(anon.get("/v0.1/servers", {"include_deleted": "true"}))["servers"]
    assert gone["_meta"][OFFICIAL]["status"] == "deleted"
    # A mirror following updated_since sees the deletion without asking for it.
    [seen] = valid_list(anon.get("/v0.1/servers", {"updated_since": before}))["servers"]
    assert seen["_meta"][OFFICIAL]["status"] == "deleted"
    name = quote(gone["server"]["name"], safe="")
    assert anon.get(f"/v0.1/servers/{name}/versions/latest").status_code == 404
    assert anon.get(f"/v0.1/servers/{name}/versions/latest?include_deleted=true").status_code == 200


@pytest.mark.parametrize(
    "params, field",
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"cursor": "nope"}, "cursor"),
        ({"updated_since": "yesterday"}, "updated_since"),
        ({"updated_since": "2026-01-01T00:00:00"}, "updated_since"),
        ({"include_deleted": "yes"}, "include_deleted"),
        ({"search": "a\x00b"}, "search"),
        ({"page": "2"}, "page"),
    ],
)
def test_bad_parameters_are_problems_naming_them(anon, params, field):
    response = anon.get("/v0.1/servers", params)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert [e["path"] for e in response.json()["errors"]] == [field]


def test_an_unknown_server_or_version_is_a_404_problem(anon, alice, native_payload):
    mcp_agent(alice, native_payload, "Known", version="1.0.0")
    name = valid_list(anon.get("/v0.1/servers"))["servers"][0]["server"]["name"]
    for path in (
        "/v0.1/servers/com.example%2Fnothing/versions",
        f"/v0.1/servers/{quote(name, safe='')}/versions/9.9.9",
    ):
        response = anon.get(path)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/problem+json"


def test_the_sync_command_writes_the_servers_of_agents_written_before(anon, alice, native_payload):
    from django.core.management import call_command

    from protocols.mcp.models import ServerVersion

    mcp_agent(alice, native_payload, "Older", version="1.0.0")
    ServerVersion.objects.all().delete()  # as before the upgrade
    assert valid_list(anon.get("/v0.1/servers"))["servers"] == []
    call_command("mcp_servers_sync")
    [item] = valid_list(anon.get("/v0.1/servers"))["servers"]
    assert item["server"]["version"] == "1.0.0"
