"""``private-endpoint`` asks DNS: a host name whose answer is a loopback, private or
link-local address is flagged, a public one is not; a name that does not resolve is a note
(``unresolved-endpoint``), never a refusal; each host is asked once per write. Against the
local DNS server (tests/dns_server.py): no network."""

import threading
import time

import pytest

from registry.moderation import rules
from registry.moderation.scanning import Subject, subject_scan

pytest_plugins = ["tests.dns_server"]


@pytest.fixture
def resolving(settings, dns_server):
    settings.SCAN_RESOLVE_HOSTS = True
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = dns_server.port
    settings.SCAN_DNS_TIMEOUT = 1.0
    dns_server.addresses.update(
        {
            "inside.example.com": ["127.0.0.1"],
            "lan.example.com": ["93.184.216.34", "10.1.2.3"],
            "link.example.com": ["fe80::1"],
            "public.example.com": ["93.184.216.34", "2606:2800:220:1::1"],
        }
    )
    return dns_server


def _subject(*urls: str) -> Subject:
    return Subject(
        "alice", "Helper", [], [(f"endpoints[{i}].address", u) for i, u in enumerate(urls)]
    )


@pytest.mark.database_independent
def test_a_name_resolving_to_a_private_address_is_flagged_and_a_public_one_is_not(resolving):
    found = rules.private_endpoint(
        _subject(
            "https://inside.example.com/a2a",
            "https://public.example.com/a2a",
            "https://lan.example.com:8443/",
            "https://link.example.com/",
        )
    )
    assert found == [
        (
            "endpoints[0].address",
            "'inside.example.com' resolves to 127.0.0.1, a loopback, private or link-local address",
        ),
        (
            "endpoints[2].address",
            "'lan.example.com' resolves to 10.1.2.3, a loopback, private or link-local address",
        ),
        (
            "endpoints[3].address",
            "'link.example.com' resolves to fe80::1, a loopback, private or link-local address",
        ),
    ]
    assert rules.private_endpoint(_subject("https://public.example.com/a2a")) == []


@pytest.mark.database_independent
def test_each_host_is_asked_once_per_write(resolving):
    subject = _subject(
        "https://public.example.com/a", "https://public.example.com/b", "https://10.0.0.1/"
    )
    assert rules.private_endpoint(subject) == [
        ("endpoints[2].address", "'10.0.0.1' is a loopback, private or local address")
    ]
    assert rules.unresolved_endpoint(subject) == []
    # One A and one AAAA question for the one name; none for the address literal.
    assert sorted(resolving.queries) == ["public.example.com", "public.example.com"]


@pytest.mark.django_db
def test_a_name_that_does_not_resolve_is_a_note_not_a_refusal(resolving, settings):
    settings.SCAN_VERDICTS = ["private-endpoint=block"]
    findings = subject_scan(_subject("https://nowhere.example.com/a2a"))
    assert [(f["rule"], f["verdict"], f["path"]) for f in findings] == [
        ("unresolved-endpoint", "note", "endpoints[0].address")
    ]
    assert "nowhere.example.com does not exist" in findings[0]["message"]


@pytest.mark.database_independent
def test_a_silent_resolver_is_given_up_on_within_the_timeout(resolving, settings):
    resolving.behaviour = "silent"
    settings.SCAN_DNS_TIMEOUT = 0.3
    started = time.monotonic()
    subject = _subject("https://inside.example.com/a2a")
    assert rules.private_endpoint(subject) == []
    assert rules.unresolved_endpoint(subject)[0][1].startswith("'inside.example.com' did not")
    assert time.monotonic() - started < 2


@pytest.mark.database_independent
def test_no_lookup_when_resolving_is_off(dns_server, settings):
    settings.SCAN_RESOLVE_HOSTS = False
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = dns_server.port
    assert rules.private_endpoint(_subject("https://inside.example.com/")) == []
    assert dns_server.queries == []


@pytest.mark.django_db
def test_an_agent_on_a_name_resolving_to_loopback_waits_for_review(
    resolving, settings, alice, anon, native_payload
):
    settings.REGISTRY_ADMISSION = "review"
    endpoint = {
        "name": "primary",
        "transport": "Http",
        "protocol": "A2A",
        "address": "https://inside.example.com/a2a",
    }
    agent = alice.post("/agents", native_payload(endpoints=[endpoint]), format="json").json()
    moderation = alice.get(f"/agents/{agent['id']}/moderation").json()
    assert moderation["admission"] == "pending"
    assert [(f["rule"], f["verdict"]) for f in moderation["findings"]] == [
        ("private-endpoint", "review")
    ]
    assert moderation["admissionReason"] == ("flagged: private-endpoint at endpoints[0].address")
    public = native_payload(name="Outside")
    public["endpoints"][0]["address"] = "https://public.example.com/a2a"
    clean = alice.post("/agents", public, format="json").json()
    assert alice.get(f"/agents/{clean['id']}/moderation").json()["findings"] == []


@pytest.mark.django_db
def test_a_bulk_writes_hosts_are_asked_once_each_side_by_side_before_its_agents_are_scanned(
    resolving, monkeypatch
):
    from django.db import transaction

    from registry.agents.inputs import AgentInput, EndpointInput
    from registry.agents.services import agents_bulk_create
    from registry.moderation.models import Moderation
    from registry.signals import writes_batched

    # The first two lookups wait for each other: asked one after the other, the barrier
    # breaks (BrokenBarrierError) and the write fails.
    both = threading.Barrier(2, timeout=5)
    asked = []
    lookup = rules.host_addresses

    def side_by_side(name, *, timeout):
        asked.append(name)
        if len(asked) <= 2:
            both.wait()
        return lookup(name, timeout=timeout)

    monkeypatch.setattr(rules, "host_addresses", side_by_side)
    hosts = ["inside.example.com", "public.example.com", "nowhere.example.com"]
    items = [
        AgentInput(
            name=f"Bulk {i}",
            endpoints=[
                EndpointInput("a2a", "Http", "A2A", f"https://{host}/a2a/{i}"),
                EndpointInput("rest", "Http", "A2A", "https://public.example.com/rest"),
            ],
        )
        for i, host in enumerate(hosts * 2)
    ]
    with transaction.atomic(), writes_batched():
        agents = agents_bulk_create(owner="alice", items=items)
    assert sorted(asked) == sorted(hosts)  # each host once for the six agents
    findings = {
        a.name: sorted({f["rule"] for f in Moderation.objects.get(agent=a).findings})
        for a in agents
        if Moderation.objects.filter(agent=a).exclude(findings=[]).exists()
    }
    assert findings == {
        "Bulk 0": ["private-endpoint"],
        "Bulk 2": ["unresolved-endpoint"],
        "Bulk 3": ["private-endpoint"],
        "Bulk 5": ["unresolved-endpoint"],
    }
