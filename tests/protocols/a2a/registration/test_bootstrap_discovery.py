"""Discovery bootstrap end to end: TXT hints from a real local DNS server and cards from a
local HTTPS server (the well-known paths, the hint's, a card's URL, what is tried and why it
failed), and the origin rules a found card's interfaces must keep."""

import copy
import json

import pytest

from protocols.a2a.registration.bootstrap import card_origin_problems, card_resolve
from protocols.a2a.registration.txt_records import (
    DiscoveryError,
)
from tests.conftest import BASE_CARD
from tests.protocols.a2a.sample_cards import SNAKE_CARD, V03_CARD

pytest_plugins = ["tests.https_server", "tests.dns_server"]


@pytest.fixture
def fetch_settings(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_ALLOW_HTTP_HOSTS = []
    return settings


def card_on(server, host: str = "localhost", **overrides) -> dict:
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"] = [
        {
            "url": f"https://{host}:{server.port}/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    card.update(overrides)
    return card


def serve(server, path: str, card: dict) -> bytes:
    body = json.dumps(card, indent=1).encode()
    server.json(path, body)
    return body


# End to end: DNS server + HTTPS server


def test_card_at_the_well_known_path_is_found(https_server, dns_server, fetch_settings):
    card = card_on(https_server)
    body = serve(https_server, "/.well-known/agent-card.json", card)

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.path_used == "well-known"
    assert found.card == card
    assert found.body == body
    assert found.source_url == https_server.url("/.well-known/agent-card.json")
    assert found.txt_hint is None
    assert found.origin_problems == []
    assert [(a.url, a.outcome) for a in found.attempts] == [
        ("dns:_agent.localhost", "no-record"),
        (https_server.url("/.well-known/agent-card.json"), "ok"),
    ]
    assert dns_server.queries == ["_agent.localhost"]


def test_legacy_agent_json_is_the_fallback(https_server, dns_server, fetch_settings):
    serve(https_server, "/.well-known/agent.json", card_on(https_server))

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.path_used == "legacy-well-known"
    assert found.source_url == https_server.url("/.well-known/agent.json")
    assert [a.outcome for a in found.attempts] == ["no-record", "http-status", "ok"]


def test_an_invalid_card_at_the_well_known_path_falls_through_with_its_problems(
    https_server, dns_server, fetch_settings
):
    serve(https_server, "/.well-known/agent-card.json", {"name": "Not a card"})
    serve(https_server, "/.well-known/agent.json", card_on(https_server))

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.path_used == "legacy-well-known"
    invalid = found.attempts[1]
    assert invalid.outcome == "invalid-card"
    assert invalid.problems[0].path == "supportedInterfaces"
    assert "not an A2A agent card" in invalid.detail


@pytest.mark.parametrize(
    "record",
    [
        "v=agent/1; c={url}; u={endpoint}",
        "v=aid1;u={url};p=a2a;s=Weather",
    ],
)
def test_the_txt_hint_wins_over_the_well_known_path(
    https_server, dns_server, fetch_settings, record
):
    hinted = card_on(https_server, name="Hinted Agent")
    serve(https_server, "/cards/weather.json", hinted)
    serve(https_server, "/.well-known/agent-card.json", card_on(https_server))
    url = https_server.url("/cards/weather.json")
    endpoint = https_server.url("/a2a/v1")
    dns_server.records["_agent.localhost"] = [[record.format(url=url, endpoint=endpoint)]]

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.path_used == "dns-txt"
    assert found.card["name"] == "Hinted Agent"
    assert found.source_url == url
    assert found.txt_hint.card_url == url
    assert found.origin_problems == []
    assert [r.path for r in https_server.requests] == ["/cards/weather.json"]


def test_a_dead_txt_hint_falls_back_to_the_well_known_path(
    https_server, dns_server, fetch_settings
):
    serve(https_server, "/.well-known/agent-card.json", card_on(https_server))
    dns_server.records["_agent.localhost"] = [
        [f"v=agent/1; c={https_server.url('/gone.json')}"],
    ]

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.path_used == "well-known"
    assert found.txt_hint.grammar == "agent/1"
    assert [(a.url, a.outcome) for a in found.attempts[1:]] == [
        (https_server.url("/gone.json"), "http-status"),
        (https_server.url("/.well-known/agent-card.json"), "ok"),
    ]


def test_dns_failure_and_bad_txt_do_not_stop_discovery(https_server, dns_server, fetch_settings):
    serve(https_server, "/.well-known/agent-card.json", card_on(https_server))
    domain = f"localhost:{https_server.port}"

    dns_server.behaviour = "servfail"
    found = card_resolve(domain=domain, resolver=dns_server.resolver(lifetime=0.5))
    assert found.attempts[0].outcome == "dns-failure"
    assert found.path_used == "well-known"

    dns_server.behaviour = "answer"
    dns_server.records["_agent.localhost"] = [
        ["v=aid1;u=https://a.example/c.json;p=a2a"],
        ["v=aid1;u=https://b.example/c.json;p=a2a"],
    ]
    found = card_resolve(domain=domain, resolver=dns_server.resolver())
    assert found.attempts[0].outcome == "txt-ambiguous"
    assert found.txt_hint is None
    assert found.path_used == "well-known"


def test_interfaces_on_another_host_are_origin_problems(https_server, dns_server, fetch_settings):
    card = card_on(https_server)
    card["supportedInterfaces"].append(
        {
            "url": "https://elsewhere.example.net/a2a",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        }
    )
    serve(https_server, "/.well-known/agent-card.json", card)

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.card == card
    assert [p.as_dict() for p in found.origin_problems] == [
        {
            "path": "supportedInterfaces[1].url",
            "message": "is on elsewhere.example.net, not on localhost or a subdomain of it",
        }
    ]


def test_interfaces_must_also_match_the_txt_endpoint_hint(https_server, dns_server, fetch_settings):
    serve(https_server, "/.well-known/agent-card.json", card_on(https_server))
    dns_server.records["_agent.localhost"] = [["v=agent/1; u=https://a2a.localhost/a2a"]]

    found = card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    assert found.txt_hint.endpoint_url == "https://a2a.localhost/a2a"
    assert [p.as_dict() for p in found.origin_problems] == [
        {
            "path": "supportedInterfaces[0].url",
            "message": "is on localhost, not on a2a.localhost of the DNS TXT hint u=",
        }
    ]


def test_nothing_found_lists_every_attempt(https_server, dns_server, fetch_settings):
    with pytest.raises(DiscoveryError) as caught:
        card_resolve(domain=f"localhost:{https_server.port}", resolver=dns_server.resolver())

    error = caught.value
    assert error.reason == "no-card"
    assert [(a.url, a.outcome) for a in error.attempts] == [
        ("dns:_agent.localhost", "no-record"),
        (https_server.url("/.well-known/agent-card.json"), "http-status"),
        (https_server.url("/.well-known/agent.json"), "http-status"),
    ]
    assert "HTTP status 404" in error.attempts[1].detail
    assert https_server.url("/.well-known/agent.json") in error.detail


def test_a_hostile_domain_is_never_fetched(https_server, fetch_settings):
    fetch_settings.FETCH_ALLOWED_HOSTS = []
    serve(https_server, "/.well-known/agent-card.json", card_on(https_server))

    with pytest.raises(DiscoveryError) as caught:
        card_resolve(domain=f"127.0.0.1:{https_server.port}")

    assert [a.outcome for a in caught.value.attempts] == ["blocked-address", "blocked-address"]
    assert https_server.connections == 0


def test_a_card_url_is_fetched_directly(https_server, fetch_settings):
    card = card_on(https_server)
    body = serve(https_server, "/agents/weather.json", card)

    found = card_resolve(url=https_server.url("/agents/weather.json"))

    assert (found.path_used, found.body, found.origin_problems) == ("url", body, [])
    assert found.source_url == https_server.url("/agents/weather.json")
    assert found.txt_hint is None


def test_a_card_url_that_is_not_https_is_refused(fetch_settings):
    with pytest.raises(DiscoveryError) as caught:
        card_resolve(url="http://localhost/agent.json")
    assert caught.value.attempts[0].outcome == "scheme-not-allowed"


def test_card_resolve_takes_a_domain_or_a_url_not_both():
    with pytest.raises(ValueError):
        card_resolve()
    with pytest.raises(ValueError):
        card_resolve(domain="example.com", url="https://example.com/card.json")


# Origin rules on 1.0, snake_case and 0.3 cards


def test_subdomains_of_the_domain_are_the_same_origin():
    card = copy.deepcopy(BASE_CARD)
    assert card_origin_problems(card, "weather.example.com") == []
    assert card_origin_problems(card, "example.com") == []
    assert [p.path for p in card_origin_problems(card, "ample.com")] == [
        "supportedInterfaces[0].url"
    ]
    assert [p.path for p in card_origin_problems(card, "a2a.weather.example.com")] == [
        "supportedInterfaces[0].url"
    ]


def test_origin_is_checked_on_snake_case_and_0_3_interfaces():
    assert card_origin_problems(copy.deepcopy(SNAKE_CARD), "snake.example.net") == []
    assert [p.path for p in card_origin_problems(copy.deepcopy(SNAKE_CARD), "other.org")] == [
        "supported_interfaces[0].url"
    ]
    assert card_origin_problems(copy.deepcopy(V03_CARD), "translator.example.org") == []
    assert [p.path for p in card_origin_problems(copy.deepcopy(V03_CARD), "example.com")] == [
        "url",
        "additionalInterfaces[0].url",
        "additionalInterfaces[1].url",
    ]


def test_grpc_authorities_and_unicode_hosts_are_compared_as_idna_hosts():
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"] = [
        {"url": "grpc.bücher.example:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {
            "url": "https://BÜCHER.example/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
    ]
    assert card_origin_problems(card, "xn--bcher-kva.example") == []
    assert card_origin_problems(card, "bücher.example") == []


def test_ip_address_origins_compare_by_address():
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"][0]["url"] = "https://[::1]:8443/a2a"
    assert card_origin_problems(card, "::1") == []
    assert [p.message for p in card_origin_problems(card, "127.0.0.1")] == [
        "is on ::1, not on 127.0.0.1"
    ]
