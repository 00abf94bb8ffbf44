"""The task probe of an MCP endpoint against a live local MCP server built with the ``mcp``
SDK over HTTPS with the test CA: the handshake and the tool list, never a tool call."""

import threading
import time

import pytest
import uvicorn
from django.core.management import call_command
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from tests.conftest import free_port

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

CALLED = []


def mcp_app():
    server = MCPServer("Probe target")

    @server.tool()
    def forecast(city: str) -> str:
        """Tomorrow's weather in a city."""
        CALLED.append(city)
        return "sunny"

    return server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


@pytest.fixture
def mcp_server(tls_ca, tmp_path, settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.PROBE_CONCURRENCY = 1
    settings.TRUST_TASK_PROBE = "opt-in"
    # The liveness probe's GET of the endpoint meets the server's event stream: it waits.
    settings.PROBE_TIMEOUT_SECONDS = 2
    port = free_port()
    pem = tmp_path / "mcp.pem"
    tls_ca.issue_cert("localhost").private_key_and_cert_chain_pem.write_to_path(str(pem))
    config = uvicorn.Config(
        mcp_app(),
        host="127.0.0.1",
        port=port,
        ssl_certfile=str(pem),
        ssl_keyfile=str(pem),
        log_level="warning",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"https://localhost:{port}/mcp"
    server.should_exit = True
    thread.join(5)


def test_an_mcp_endpoint_gets_the_handshake_and_the_tool_list_never_a_call(
    mcp_server, alice, anon, native_payload, capsys
):
    payload = native_payload(name="Weather MCP")
    payload["endpoints"][0].update(protocol="MCP", address=mcp_server)
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    assert alice.patch(f"/agents/{agent_id}", {"taskProbe": True}, format="json").status_code == 200
    call_command("probe_endpoints", agent=agent_id)
    capsys.readouterr()
    probes = anon.get(f"/agents/{agent_id}/liveness").json()["probes"]
    checks = {p["check"]: (p["up"], p["detail"]) for p in probes if p["check"]}
    assert {name: up for name, (up, _) in checks.items()} == {
        "tls": True,
        "binding": True,
        "wellFormed": True,
    }
    assert "1 tools (forecast)" in checks["wellFormed"][1]
    assert CALLED == []
