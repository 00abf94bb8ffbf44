"""The official ARD conformance CLI (conformance/README.md beside this file), run as a
program against a live test server holding MCP servers of every shape the catalog lists: an
agent that is one MCP server, an agent with an A2A card and an MCP server (a nested catalog
of both), and an A2A agent alone. Manifest mode reads the AI Catalog (its JSON Schema
check on: the CLI's repository laid out around it); registry mode asks ARD search for
`application/mcp-server-card+json` and checks every result, then the list and explore."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

HERE = Path(__file__).resolve().parent
CLI = HERE / "conformance" / "conformance-test"
SCHEMA = HERE.parents[2] / "protocols" / "ard" / "schemas" / "ai-catalog.schema.json"
MCP_CARD = "application/mcp-server-card+json"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.apps("a2a", "mcp_face", "ard")]


@pytest.fixture
def cli(tmp_path) -> Path:
    """The CLI where its repository keeps it, with the catalog schema where it looks."""
    bin_dir = tmp_path / "conformance" / "bin"
    bin_dir.mkdir(parents=True)
    (tmp_path / "spec" / "schemas").mkdir(parents=True)
    shutil.copy(SCHEMA, tmp_path / "spec" / "schemas" / "ai-catalog.schema.json")
    return Path(shutil.copy(CLI, bin_dir / "conformance-test"))


def run(cli: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(cli), *args], capture_output=True, text=True, timeout=60
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "✗" not in output, output
    return output


@pytest.fixture
def mcp_population(alice, make_card, native_payload):
    server = native_payload(
        name="Weather Tools", description="Weather forecast tools for any city, over MCP."
    )
    server["endpoints"][0].update(
        protocol="MCP", name="tools", address="https://mcp.weather.example/mcp"
    )
    assert alice.post("/agents", server, format="json").status_code == 201
    card = make_card(name="Forecast Desk", description="Weather forecast tools and alerts.")
    response = alice.post("/a2a/agents", {"card": card}, format="json")
    assert response.status_code == 201, response.content
    endpoint = native_payload()["endpoints"][0]
    endpoint.update(protocol="MCP", name="alerts", address="https://mcp.desk.example/mcp")
    added = alice.post(f"/agents/{response.json()['id']}/endpoints", endpoint, format="json")
    assert added.status_code == 201, added.content
    plain = make_card(name="Tide Reader", description="Reads tide tables.")
    plain["supportedInterfaces"] = [
        {"url": "https://tides.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert alice.post("/a2a/agents", {"card": plain}, format="json").status_code == 201


def test_the_official_cli_passes_the_catalog_and_the_registry_with_mcp_servers(
    live_server, mcp_population, cli
):
    catalog_url = f"{live_server.url}/.well-known/ai-catalog.json"
    catalog = requests.get(catalog_url, timeout=10).json()
    types = {entry["type"] for entry in catalog["entries"]}
    nested = [e for e in catalog["entries"] if e["type"] == "application/ai-catalog+json"]
    assert MCP_CARD in types  # the MCP-only agent is its server card
    assert any(MCP_CARD in {n["type"] for n in e["data"]["entries"]} for e in nested)

    manifest = run(cli, "manifest", catalog_url)
    assert "Skipping strict JSON Schema check" not in manifest
    assert "Schema file not found" not in manifest

    registry = run(cli, "registry", f"{live_server.url}/ard")
    found = re.search(r"POST /search returned valid results list \((\d+) items\)", registry)
    assert found is not None, registry
    assert int(found.group(1)) >= 1, registry  # MCP servers were found, and each checked
    assert "GET /agents response contains valid 'items' list" in registry
    assert "POST /explore returned valid facets object" in registry
