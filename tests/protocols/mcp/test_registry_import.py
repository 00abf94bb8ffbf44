"""Import from an MCP Registry: a local HTTPS stub serving official-shaped /v0.1/servers pages
(cursor, updated_since, a deprecation, a deletion), read through the safe fetcher and
converging over two runs; the official valid examples imported, the invalid refused with
their reason."""

import json
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from django.core.management import call_command

from protocols.mcp.imports.services import source_add, source_import
from protocols.mcp.models import ImportedServer, RegistrySource
from registry.agents.models import Agent

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parent / "schemas" / "examples"
OFFICIAL = "io.modelcontextprotocol.registry/official"
T1, T2, T3 = "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z", "2026-01-03T10:00:00Z"


def example(kind: str, name: str) -> dict:
    return json.loads((EXAMPLES / kind / f"{name}.json").read_text())


def listed(server: dict, updated: str, status: str = "active", **official) -> dict:
    meta = {"status": status, "publishedAt": T1, "updatedAt": updated, "isLatest": True}
    return {"server": server, "_meta": {OFFICIAL: {**meta, **official}}}


def remote_server(name: str, version: str = "1.0.0") -> dict:
    return {
        "name": f"io.github.user/{name}",
        "description": f"The {name} MCP server.",
        "version": version,
        "remotes": [
            {
                "type": "streamable-http",
                "url": f"https://{name}.example/mcp",
                "headers": [{"name": "X-API-Key", "isRequired": True, "value": "secret"}],
            }
        ],
    }


class Registry:
    """The stub MCP Registry: each page at the exact URL the importer asks for."""

    def __init__(self, server, settings):
        self.server = server
        settings.MCP_IMPORT_PAGE_SIZE = 2

    @property
    def base(self) -> str:
        return self.server.url("").rstrip("/")

    def page(self, items: list, *, cursor=None, since=None, next_cursor=None, api="v0.1"):
        params = {"limit": 2}
        if since:
            params["updated_since"] = since
        if cursor:
            params["cursor"] = cursor
        metadata = {"count": len(items)}
        if next_cursor:
            metadata["nextCursor"] = next_cursor
        body = json.dumps({"servers": items, "metadata": metadata}).encode()
        self.server.json(f"/{api}/servers?{urlencode(params)}", body)


@pytest.fixture
def registry(network, https_server, settings) -> Registry:
    return Registry(https_server, settings)


@pytest.fixture
def network(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    return settings


def agent_of(name: str) -> Agent:
    return ImportedServer.objects.select_related("agent").get(name=name).agent


def test_two_runs_converge_on_what_the_registry_lists(registry, anon):
    registry.page(
        [
            listed(remote_server("weather"), T1),
            listed(example("valid", "with-package"), T1),
        ],
        next_cursor="c1",
    )
    registry.page(
        [listed(remote_server("orders"), T2), listed(example("invalid", "bad-name-pattern"), T2)],
        cursor="c1",
    )
    source = source_add(url=registry.base + "/", owner="importer")
    first = source_import(source)
    assert (first["pages"], first["added"], first["seen"]) == (2, 3, 4)
    assert first["refused"][0]["name"] == "no-namespace-separator"
    assert "does not match" in first["refused"][0]["reason"]
    source.refresh_from_db()
    assert (source.status, source.api, source.synced_until) == ("ok", "v0.1", T2)

    weather = agent_of("io.github.user/weather")
    assert (weather.source, weather.owner, weather.version) == ("mcp-registry", "importer", "1.0.0")
    [endpoint] = weather.endpoints.all()
    assert (endpoint.protocol, endpoint.address) == ("MCP", "https://weather.example/mcp")
    # The header's name is kept, never its value.
    assert endpoint.protocol_metadata["headers"] == [{"name": "X-API-Key", "isRequired": True}]
    assert "secret" not in json.dumps(endpoint.protocol_metadata)
    shown = anon.get(f"/agents/{weather.pk}").json()
    assert shown["mcpRegistry"] == {
        "registry": registry.base,
        "name": "io.github.user/weather",
        "version": "1.0.0",
        "status": "active",
    }
    # Packages are kept with the server; a server without remotes has no endpoint.
    local = ImportedServer.objects.get(name="io.github.user/local-weather")
    assert local.document["packages"][0]["identifier"] == "@modelcontextprotocol/server-weather"
    assert local.agent.endpoints.count() == 0

    # The second run asks what changed since the newest change seen.
    registry.page(
        [
            listed(remote_server("orders"), T3, "deprecated", statusMessage="Use orders v2."),
            listed(remote_server("weather"), T3, "deleted"),
        ],
        since=T2,
        next_cursor="c2",
    )
    registry.page([listed(remote_server("tides", "0.3.0"), T3)], since=T2, cursor="c2")
    second = source_import(RegistrySource.objects.get())
    assert (second["added"], second["deprecated"], second["retired"]) == (1, 1, 1)
    orders = agent_of("io.github.user/orders")
    assert (orders.status, orders.status_reason) == ("deprecated", "Use orders v2.")
    assert agent_of("io.github.user/weather").status == "retired"
    assert agent_of("io.github.user/tides").version == "0.3.0"

    # Converged: a run that finds nothing new changes nothing.
    registry.page([], since=T3)
    before = sorted(Agent.objects.values_list("name", "status", "version", "updated_at"))
    third = source_import(RegistrySource.objects.get())
    assert (third["seen"], third["added"], third["updated"]) == (0, 0, 0)
    assert sorted(Agent.objects.values_list("name", "status", "version", "updated_at")) == before

    # The registry's own MCP Registry API lists them under the names they came with.
    names = {
        item["server"]["name"]: item["_meta"][OFFICIAL]["status"]
        for item in anon.get("/v0.1/servers", {"include_deleted": "true"}).json()["servers"]
    }
    assert names == {
        "io.github.user/weather": "deleted",
        "io.github.user/orders": "deprecated",
        "io.github.user/tides": "active",
    }
    requested = [r.path for r in registry.server.requests]
    assert f"/v0.1/servers?limit=2&updated_since={quote(T2)}" in requested


def test_the_official_examples_valid_are_imported_and_invalid_refused_with_their_reason(
    registry,
):
    valid = ["minimal", "with-package", "with-remote"]
    invalid = {
        "bad-name-pattern": "does not match",
        "description-too-long": "is too long",
        "missing-name": "'name' is a required property",
        "package-version-latest": "packages/0/version",
        "positional-argument-missing-value": "packages/0/packageArguments/0",
    }
    items = [listed(example("valid", n), T1) for n in valid]
    items += [listed(example("invalid", n), T1) for n in invalid]
    registry.server.json(
        "/v0.1/servers?limit=2", json.dumps({"servers": items, "metadata": {}}).encode()
    )
    report = source_import(source_add(url=registry.base, owner="importer"))
    assert report["added"] == 3
    assert sorted(ImportedServer.objects.values_list("name", flat=True)) == sorted(
        example("valid", n)["name"] for n in valid
    )
    refused = report["refused"]
    assert len(refused) == len(invalid)
    for (name, reason), refusal in zip(invalid.items(), refused, strict=True):
        assert reason in refusal["reason"], (name, refusal)
    remote = agent_of("io.github.user/remote-weather")
    assert remote.name == "Remote Weather"
    assert remote.endpoints.get().protocol_metadata["repository"]["source"] == "github"


def test_an_older_registry_is_read_at_v0_and_the_command_runs_it(registry, capsys):
    registry.server.route("/v0.1/servers?limit=2", 404, {}, b"not found")
    registry.page([listed(remote_server("legacy"), T1)], api="v0")
    call_command("mcp_registry_import", "--url", registry.base, "--owner", "ops")
    assert '"added": 1' in capsys.readouterr().out
    assert RegistrySource.objects.get().api == "v0"
    assert agent_of("io.github.user/legacy").owner == "ops"


def test_a_page_that_cannot_be_read_fails_the_run_and_says_why(registry):
    registry.server.json("/v0.1/servers?limit=2", b'{"servers": "nope"}')
    report = source_import(source_add(url=registry.base, owner="importer"))
    source = RegistrySource.objects.get()
    assert source.status == "failed" and "server list" in source.last_problem
    assert report["problem"] == source.last_problem and Agent.objects.count() == 0
