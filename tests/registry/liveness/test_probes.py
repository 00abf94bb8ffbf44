"""Active probes of Persistent http(s) endpoints, against a local HTTPS server."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from registry.agents.models import Endpoint
from registry.liveness.models import ProbeResult
from registry.liveness.tasks import endpoints_probe

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


@pytest.fixture
def network(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.PROBE_INTERVAL_SECONDS = 300
    settings.PROBE_TIMEOUT_SECONDS = 2
    settings.PROBE_CONCURRENCY = 1
    return settings


def register(client, name: str, address: str, **extra) -> dict:
    payload = {
        "name": name,
        "endpoints": [
            {"name": "svc", "transport": "Http", "protocol": "Generic", "address": address} | extra
        ],
    }
    response = client.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def probe(capsys, agent: dict) -> str:
    call_command("probe_endpoints", agent=agent["id"])
    return capsys.readouterr().out


def test_an_endpoint_that_answers_is_up_and_live_for_two_and_a_half_intervals(
    network, https_server, alice, anon, capsys
):
    https_server.route("/svc", 200, {"Content-Type": "text/html"}, b"<p>hello</p>")
    agent = register(alice, "Answers", https_server.url("/svc"))

    assert ": up, ok HTTP 200" in probe(capsys, agent)

    shown = anon.get(f"/agents/{agent['id']}").json()
    liveness = shown["endpoints"][0]["liveness"]
    assert (liveness["status"], liveness["checkedBy"]) == ("live", "probe")
    assert liveness["lastProbe"]["up"] is True
    assert liveness["lastProbe"]["category"] == "ok"
    seen, until = parse_datetime(liveness["lastSeenAt"]), parse_datetime(liveness["aliveUntil"])
    assert (until - seen).total_seconds() == 750
    assert shown["live"] is True
    assert shown["uptime"] == {"day": 1.0, "week": 1.0}
    assert [
        a["name"] for a in anon.get("/discover/agents", {"conformant": "true"}).json()["results"]
    ] == ["Answers"]


@pytest.mark.parametrize(("status", "up"), [(404, True), (405, True), (503, False)])
def test_below_500_is_up_and_5xx_is_down(network, https_server, alice, anon, capsys, status, up):
    https_server.route("/svc", status, {}, b"")
    agent = register(alice, "Status", https_server.url("/svc"))

    line = probe(capsys, agent)

    assert (": up," in line) is up
    liveness = anon.get(f"/agents/{agent['id']}").json()["endpoints"][0]["liveness"]
    assert liveness["status"] == ("live" if up else "down")
    assert liveness["lastProbe"]["category"] == ("ok" if up else "http_error")
    assert ProbeResult.objects.get().status_code == status


def test_a_failed_probe_ends_what_probes_had_granted(network, https_server, alice, anon, capsys):
    https_server.route("/svc", 200, {}, b"ok")
    agent = register(alice, "Flaky", https_server.url("/svc"))
    probe(capsys, agent)
    https_server.route("/svc", 502, {}, b"")

    probe(capsys, agent)

    shown = anon.get(f"/agents/{agent['id']}").json()
    assert shown["endpoints"][0]["liveness"]["status"] == "down"
    assert shown["live"] is False
    assert shown["uptime"] == {"day": 0.5, "week": 0.5}
    history = anon.get(f"/agents/{agent['id']}/liveness").json()
    assert [(p["up"], p["status"]) for p in history["probes"]] == [(False, 502), (True, 200)]


def test_private_targets_are_refused_without_a_connection(
    settings, tcp_listener, alice, anon, capsys
):
    settings.FETCH_ALLOWED_HOSTS = []
    settings.PROBE_CONCURRENCY = 1
    agent = register(alice, "Inside", f"https://127.0.0.1:{tcp_listener.port}/")

    assert "down, refused" in probe(capsys, agent)
    assert tcp_listener.connections == 0
    assert anon.get(f"/agents/{agent['id']}").json()["endpoints"][0]["liveness"]["status"] == (
        "down"
    )


def test_a_server_slower_than_the_timeout_is_a_timeout_in_real_seconds(
    network, https_server, alice, capsys
):
    network.PROBE_TIMEOUT_SECONDS = 1
    https_server.route("/svc", 200, {}, b"late", delay=3)
    agent = register(alice, "Slow", https_server.url("/svc"))

    assert "down, timeout" in probe(capsys, agent)


def test_the_job_probes_what_is_due_once_and_spreads_the_next_probes(
    network, https_server, alice, native_payload
):
    https_server.route("/svc", 200, {}, b"ok")
    register(alice, "One", https_server.url("/svc"))
    register(alice, "Two", https_server.url("/svc"))
    queue = native_payload(
        name="Queue",
        endpoints=[{"name": "q", "transport": "Amqp", "protocol": "Generic", "address": "jobs"}],
    )
    alice.post("/agents", queue, format="json")
    old = ProbeResult.objects.create(
        endpoint=Endpoint.objects.filter(agent__name="One").get(),
        agent_id=Endpoint.objects.filter(agent__name="One").get().agent_id,
        at=timezone.now() - timedelta(days=31),
        ok=True,
        category="ok",
    )

    assert endpoints_probe.delay().get() == 2  # not the queue endpoint
    assert endpoints_probe.delay().get() == 0  # nothing due again yet

    due = list(Endpoint.objects.exclude(next_probe_at=None).values_list("next_probe_at", flat=True))
    assert len(due) == 2
    assert all(timedelta(seconds=300) <= d - timezone.now() + timedelta(seconds=5) for d in due)
    # History keeps a week, or the trust score's window (TRUST_HISTORY_DAYS, 30) when longer.
    assert not ProbeResult.objects.filter(pk=old.pk).exists()


def test_the_history_is_newest_first_and_bounded(network, https_server, alice, anon, capsys):
    https_server.route("/svc", 200, {}, b"ok")
    agent = register(alice, "History", https_server.url("/svc"))
    for _ in range(3):
        probe(capsys, agent)

    body = anon.get(f"/agents/{agent['id']}/liveness", {"limit": 2}).json()
    assert len(body["probes"]) == 2
    assert body["probes"][0]["at"] >= body["probes"][1]["at"]
    assert anon.get(f"/agents/{agent['id']}/liveness", {"limit": 501}).status_code == 400
    assert anon.get("/agents/7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1/liveness").status_code == 404


def test_the_job_leaves_a_retired_agents_endpoints_unprobed(network, https_server, alice):
    https_server.route("/svc", 200, {}, b"ok")
    kept = register(alice, "Kept", https_server.url("/svc"))
    retired = register(alice, "Retired", https_server.url("/svc"))
    assert alice.delete(f"/agents/{retired['id']}").status_code == 204

    assert endpoints_probe.delay().get() == 1
    assert ProbeResult.objects.filter(agent_id=kept["id"]).count() == 1
    assert not ProbeResult.objects.filter(agent_id=retired["id"]).exists()
    gone = Endpoint.objects.get(agent_id=retired["id"])
    assert (gone.alive_until, gone.last_probe_at) == (None, None)
