"""The task probe of the gRPC binding against live local A2A agents built with a2a-sdk's
gRPC server over TLS with the test CA: one that works (its checks pass, its certificate's
expiry seen), one that hangs (cut by the probe's deadline), and a gRPC endpoint whose host
resolves to a private address, refused by the safe fetcher's address rules before any
channel opens."""

import asyncio
import threading
import time

import grpc
import pytest
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import AgentCard
from django.core.management import call_command
from google.protobuf.json_format import ParseDict

from tests.conftest import free_port
from tests.protocols.a2a.registration import test_task_probe
from tests.protocols.a2a.registration.test_task_probe import Done, probed

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db
probing = test_task_probe.probing  # the HTTP probe tests' settings, the same here


class Hangs(a2a_pb2_grpc.A2AServiceServicer):
    """Takes every call and never answers within a probe's time."""

    async def SendMessage(self, request, context):
        await asyncio.sleep(30)


@pytest.fixture
def grpc_agent(tls_ca):
    """Start a local gRPC A2A agent (``works`` or ``hangs``) on 127.0.0.1 with a certificate
    for localhost from the test CA; its port."""
    started = []

    def start(kind: str, card: dict) -> int:
        port = free_port()
        leaf = tls_ca.issue_cert("localhost")
        chain = b"".join(pem.bytes() for pem in leaf.cert_chain_pems)
        loop = asyncio.new_event_loop()
        ready, stop = threading.Event(), asyncio.Event()

        async def serve():
            server = grpc.aio.server()
            if kind == "works":
                handler = DefaultRequestHandler(
                    agent_executor=Done(),
                    task_store=InMemoryTaskStore(),
                    agent_card=ParseDict(card, AgentCard(), ignore_unknown_fields=True),
                )
                servicer = GrpcHandler(handler)
            else:
                servicer = Hangs()
            a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
            credentials = grpc.ssl_server_credentials([(leaf.private_key_pem.bytes(), chain)])
            server.add_secure_port(f"127.0.0.1:{port}", credentials)
            await server.start()
            ready.set()
            await stop.wait()
            await server.stop(grace=None)

        thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
        thread.start()
        assert ready.wait(10)
        started.append((loop, stop, thread))
        return port

    yield start
    for loop, stop, thread in started:
        loop.call_soon_threadsafe(stop.set)
        thread.join(5)


def grpc_card(make_card, address: str) -> dict:
    card = make_card()
    card["supportedInterfaces"] = [
        {"url": address, "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]
    card.pop("securitySchemes", None)
    card.pop("securityRequirements", None)
    return card


def test_a_working_grpc_agent_answers_every_call(
    probing, grpc_agent, make_card, alice, anon, capsys
):
    port = grpc_agent("works", grpc_card(make_card, "localhost:0"))
    checks = probed(alice, anon, grpc_card(make_card, f"localhost:{port}"), capsys)
    assert checks[""][0] is True  # reached: its TLS handshake, by the fetcher's rules
    assert {name: up for name, (up, *_) in checks.items() if name not in ("", "card")} == {
        "tls": True,
        "binding": True,
        "auth": True,
        "wellFormed": True,
        "taskLifecycle": True,
    }
    assert checks["binding"][1] == "answered with gRPC status OK"
    assert "found again by GetTask" in checks["taskLifecycle"][1]
    assert checks["tls"][2] is not None  # the certificate's expiry, seen
    # Its card is looked for at its host's HTTPS port, which this local agent does not serve.
    assert checks["card"][0] is False


def test_a_hanging_grpc_agent_is_cut_by_the_probe_deadline(
    probing, grpc_agent, make_card, alice, anon, capsys
):
    probing.TRUST_TASK_PROBE_SECONDS = 2
    port = grpc_agent("hangs", grpc_card(make_card, "localhost:0"))
    card = grpc_card(make_card, f"localhost:{port}")
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    assert alice.patch(f"/agents/{agent_id}", {"taskProbe": True}, format="json").status_code == 200
    began = time.monotonic()
    call_command("probe_endpoints", agent=agent_id)
    assert time.monotonic() - began < 10  # the probe's 2 s (and the reach's), not the agent's 30
    capsys.readouterr()
    probes = anon.get(f"/agents/{agent_id}/liveness").json()["probes"]
    checks = {p["check"]: (p["up"], p["detail"]) for p in probes}
    assert checks["tls"][0] is True
    assert checks["binding"] == (False, "no answer: no answer within the probe's 2 s")


def test_a_grpc_endpoint_at_a_private_address_is_refused_before_any_call(
    probing, grpc_agent, make_card, alice, anon, capsys
):
    probing.FETCH_ALLOWED_HOSTS = []  # localhost is a private address again
    port = grpc_agent("works", grpc_card(make_card, "localhost:0"))
    checks = probed(alice, anon, grpc_card(make_card, f"localhost:{port}"), capsys)
    assert checks[""][0] is False
    assert checks["binding"][0] is False
    assert "not a public address" in checks["binding"][1]
