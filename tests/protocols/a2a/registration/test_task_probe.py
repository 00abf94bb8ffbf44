"""The task probe against live local A2A agents built with a2a-sdk's server over HTTPS with
the test CA: one that works, one that answers malformed JSON-RPC, one whose card declares
no authentication but requires it, one with an expired certificate, one that hangs; each
with the checks it should get, kept in the probe history."""

import asyncio
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import uvicorn
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentCard, Task, TaskState, TaskStatus
from django.core.management import call_command
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.conftest import free_port

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


@pytest.fixture
def probing(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.PROBE_CONCURRENCY = 1
    settings.PROBE_TIMEOUT_SECONDS = 5
    settings.TRUST_TASK_PROBE = "opt-in"
    settings.TRUST_TASK_PROBE_SECONDS = 10
    return settings


class Done(AgentExecutor):
    """Answers every message with a completed task."""

    async def execute(self, context, event_queue) -> None:
        status = TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
        await event_queue.enqueue_event(
            Task(id=context.task_id, context_id=context.context_id, status=status)
        )

    async def cancel(self, context, event_queue) -> None:
        return None


def agent_app(card: dict, kind: str) -> Starlette:
    """A local agent of ``kind``: works, malformed, auth (a 401 its card does not
    declare) or hangs."""

    async def card_route(request):
        return JSONResponse(card)

    routes = [Route("/.well-known/agent-card.json", card_route)]
    if kind == "works":
        handler = DefaultRequestHandler(
            agent_executor=Done(),
            task_store=InMemoryTaskStore(),
            agent_card=ParseDict(card, AgentCard(), ignore_unknown_fields=True),
        )
        routes += create_jsonrpc_routes(handler, "/a2a")
    else:

        async def answer(request):
            if kind == "hangs":
                await asyncio.sleep(30)
            if kind == "auth":
                return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
            return Response(
                b'{"jsonrpc": "2.0", "id": 1, "oops": true}', media_type="application/json"
            )

        routes.append(Route("/a2a", answer, methods=["POST"]))
    return Starlette(routes=routes)


@pytest.fixture
def agent_server(tls_ca, tmp_path):
    started = []

    def start(kind: str, card_of, *, expired: bool = False) -> int:
        port = free_port()
        if expired:
            now = datetime.now(UTC)
            leaf = tls_ca.issue_cert(
                "localhost", not_before=now - timedelta(days=30), not_after=now - timedelta(days=1)
            )
        else:
            leaf = tls_ca.issue_cert("localhost")
        pem = tmp_path / f"agent-{port}.pem"
        leaf.private_key_and_cert_chain_pem.write_to_path(str(pem))
        config = uvicorn.Config(
            agent_app(card_of(port), kind),
            host="127.0.0.1",
            port=port,
            ssl_certfile=str(pem),
            ssl_keyfile=str(pem),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        started.append((server, thread))
        return port

    yield start
    for server, _ in started:
        server.should_exit = True
    for _, thread in started:
        thread.join(5)


def card_at(make_card, port: int) -> dict:
    card = make_card()
    card["supportedInterfaces"] = [
        {
            "url": f"https://localhost:{port}/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    card.pop("securitySchemes", None)
    card.pop("securityRequirements", None)
    return card


def probed(alice, anon, card: dict, capsys, *, opt_in: bool = True, trust=None, took=None) -> dict:
    created = alice.post("/a2a/agents", {"card": card}, format="json")
    assert created.status_code == 201, created.content
    agent_id = created.json()["id"]
    if opt_in:
        changed = alice.patch(f"/agents/{agent_id}", {"taskProbe": True}, format="json")
        assert changed.status_code == 200 and changed.json()["taskProbe"] is True
    began = time.monotonic()
    call_command("probe_endpoints", agent=agent_id)
    if took is not None:  # the probe job's seconds, the registration's not counted
        took.append(time.monotonic() - began)
    capsys.readouterr()
    probes = anon.get(f"/agents/{agent_id}/liveness").json()["probes"]
    if trust is not None:  # the trust signal the task probe gives, as the agent shows it
        trust.update(anon.get(f"/agents/{agent_id}").json()["trust"]["signals"]["taskProbe"])
    return {p["check"]: (p["up"], p["detail"], p["certExpiresAt"]) for p in probes}


def test_a_working_agent_passes_every_check(probing, agent_server, make_card, alice, anon, capsys):
    port = agent_server("works", lambda p: card_at(make_card, p))
    signal = {}
    checks = probed(alice, anon, card_at(make_card, port), capsys, trust=signal)
    assert (signal["value"], signal["passed"], signal["failed"]) == (1.0, 6, [])
    assert {name: up for name, (up, *_) in checks.items()} == {
        "": True,
        "card": True,
        "tls": True,
        "binding": True,
        "auth": True,
        "wellFormed": True,
        "taskLifecycle": True,
    }
    assert "found again by GetTask" in checks["taskLifecycle"][1]
    assert checks["tls"][2] is not None  # the certificate's expiry, seen


def test_an_agent_not_opted_in_gets_no_request(
    probing, agent_server, make_card, alice, anon, capsys
):
    port = agent_server("works", lambda p: card_at(make_card, p))
    checks = probed(alice, anon, card_at(make_card, port), capsys, opt_in=False)
    assert set(checks) == {""}


def test_malformed_json_rpc_is_not_well_formed(
    probing, agent_server, make_card, alice, anon, capsys
):
    port = agent_server("malformed", lambda p: card_at(make_card, p))
    signal = {}
    checks = probed(alice, anon, card_at(make_card, port), capsys, trust=signal)
    assert signal["failed"] == ["taskLifecycle", "wellFormed"]
    assert signal["value"] == round(4 / 6, 3)
    assert checks["binding"][0] is True
    assert checks["wellFormed"][0] is False
    assert checks["taskLifecycle"][0] is False


def test_authentication_required_but_not_declared_fails_auth(
    probing, agent_server, make_card, alice, anon, capsys
):
    port = agent_server("auth", lambda p: card_at(make_card, p))
    checks = probed(alice, anon, card_at(make_card, port), capsys)
    assert checks["auth"][0] is False
    assert "does not declare" in checks["auth"][1]


def test_an_expired_certificate_fails_tls_and_reaches_nothing(
    probing, agent_server, make_card, alice, anon, capsys
):
    port = agent_server("works", lambda p: card_at(make_card, p), expired=True)
    checks = probed(alice, anon, card_at(make_card, port), capsys)
    assert checks["tls"][0] is False
    assert checks["card"][0] is False
    assert checks["binding"][0] is False


def test_a_hanging_agent_is_cut_by_the_probe_deadline(
    probing, agent_server, make_card, alice, anon, capsys
):
    probing.TRUST_TASK_PROBE_SECONDS = 1
    port = agent_server("hangs", lambda p: card_at(make_card, p))
    took = []
    checks = probed(alice, anon, card_at(make_card, port), capsys, took=took)
    assert took[0] < 20  # the probe's second (and the other checks'), not the agent's 30
    assert checks["binding"][0] is False
