"""The safe fetcher's addresses and deadlines: it connects to the address it checked, refuses
private and hostile targets before connecting, and gives up on trickled headers, hanging DNS
lookups and a request's spent budget."""

import socket
import threading
import time

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from registry.outbound.addresses import is_public_address
from registry.outbound.deadlines import FetchBudgetMiddleware
from registry.outbound.fetch import FetchError, fetch
from tests.registry.outbound.conftest import CARD

# A plugin rather than imported names: ruff reports every imported fixture
# used as an argument as a redefinition (F811).
pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.usefixtures("fetch_settings")

HOSTILE_URLS = [
    "https://2130706433/",
    "https://0x7f.1/",
    "https://127.1/",
    "https://127.0.0.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::1]/",
    "https://[::127.0.0.1]/",
    "https://localhost/",
    "https://169.254.169.254/latest/meta-data/",
    "https://[fe80::1]/",
    "https://0.0.0.0/",
    "https://[::]/",
    "https://10.0.0.1/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",
    "https://198.18.0.1/",
    "https://240.0.0.1/",
    "https://255.255.255.255/",
    "https://[fc00::1]/",
    "https://[fec0::1]/",
    "https://224.0.0.1/",
    "https://[ff02::1]/",
    "https://[::ffff:10.0.0.1]/",
    "https://[::ffff:a9fe:a9fe]/",
    "https://[64:ff9b::10.0.0.1]/",
    "https://[64:ff9b::7f00:1]/",
    "https://[64:ff9b:1::a00:1]/",
    "https://[2002:a00:1::]/",
    "https://[2002:7f00:1::1]/",
    "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
]


def test_the_connection_goes_to_the_address_that_was_checked(resolver, https_server):
    # A second lookup would get no answer, so the fetch only works if the
    # connection reuses the first one.
    resolver.answers["localhost"] = [["127.0.0.1"], []]
    https_server.json("/card", CARD)

    result = fetch(https_server.url("/card"))

    assert result.body == CARD
    assert resolver.lookups == ["localhost"]


def test_a_host_with_any_private_address_is_refused(settings, resolver, connect_attempts):
    settings.FETCH_ALLOWED_HOSTS = []
    resolver.answers["agent.example"] = ["93.184.215.14", "10.0.0.7"]

    with pytest.raises(FetchError) as caught:
        fetch("https://agent.example/card")

    assert caught.value.reason == "blocked-address"
    assert "10.0.0.7" in caught.value.detail
    assert connect_attempts == []


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_targets_are_refused_before_connecting(settings, url, connect_attempts):
    settings.FETCH_ALLOWED_HOSTS = []

    with pytest.raises(FetchError) as caught:
        fetch(url)

    assert caught.value.reason == "blocked-address"
    assert caught.value.url == url
    assert connect_attempts == []


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "2130706433", "0x7f.1", "127.1", "[::ffff:127.0.0.1]"]
)
def test_hostile_targets_never_reach_a_local_listener(settings, tcp_listener, host):
    settings.FETCH_ALLOWED_HOSTS = []

    with pytest.raises(FetchError) as caught:
        fetch(f"https://{host}:{tcp_listener.port}/")

    assert caught.value.reason == "blocked-address"
    assert tcp_listener.connections == 0


def test_a_leading_zero_ipv4_host_is_refused_as_an_invalid_url(settings, tcp_listener):
    # httpx refuses 0177.0.0.1 (octal for 127.0.0.1) before any lookup.
    settings.FETCH_ALLOWED_HOSTS = []

    with pytest.raises(FetchError) as caught:
        fetch(f"https://0177.0.0.1:{tcp_listener.port}/")

    assert caught.value.reason == "invalid-url"
    assert tcp_listener.connections == 0


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"],
)
def test_public_addresses_are_allowed(address):
    assert is_public_address(address)


def test_headers_trickled_a_line_at_a_time_hit_the_total_time_limit(settings, https_server):
    # Every read returns within its timeout; only a deadline over the exchange ends it.
    settings.FETCH_TOTAL_TIMEOUT = 1
    https_server.route("/trickle", trickle=0.2)
    began = time.monotonic()

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/trickle"))

    assert caught.value.reason == "timeout"
    assert time.monotonic() - began < 10  # the server would trickle for a minute


def test_a_dns_lookup_that_hangs_is_given_up_at_the_deadline(settings, monkeypatch):
    settings.FETCH_TOTAL_TIMEOUT = 1
    release = threading.Event()

    def hanging_lookup(*args, **kwargs):
        release.wait(30)
        raise OSError("never answered")

    monkeypatch.setattr(socket, "getaddrinfo", hanging_lookup)
    try:
        with pytest.raises(FetchError) as caught:
            fetch("https://hangs.example/card.json")
    finally:
        release.set()

    assert caught.value.reason == "dns-failure"
    assert "in time" in caught.value.detail


def test_the_fetches_of_one_request_share_one_budget(settings, https_server):
    settings.FETCH_TOTAL_TIMEOUT = 1
    settings.FETCH_REQUEST_BUDGET = 1.5
    https_server.route("/trickle", trickle=0.2)
    https_server.json("/card", CARD)
    outcomes = []

    def view(request):
        for path in ("/trickle", "/trickle", "/card"):
            try:
                fetch(https_server.url(path))
                outcomes.append("ok")
            except FetchError as exc:
                outcomes.append(exc.detail)
        return HttpResponse()

    FetchBudgetMiddleware(view)(RequestFactory().get("/"))

    assert outcomes[0].endswith("did not answer in time.")
    assert outcomes[1].endswith("did not answer in time.")  # what was left of the budget
    assert outcomes[2].endswith("this request's time for fetches ran out.")
    assert [r.path for r in https_server.requests] == ["/trickle", "/trickle"]
