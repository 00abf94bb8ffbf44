"""Discovery bootstrap: TXT hints, a real local DNS server, and cards from a local HTTPS server."""

import copy
import json
from datetime import UTC, datetime

import pytest

from protocols.a2a.registration.bootstrap import card_origin_problems, card_resolve
from protocols.a2a.registration.txt_records import (
    DiscoveryError,
    DnsLookupError,
    TxtHintError,
    dns_resolver,
    txt_hint_parse,
    txt_records,
)
from tests.conftest import BASE_CARD
from tests.protocols.a2a.sample_cards import SNAKE_CARD, V03_CARD

pytest_plugins = ["tests.https_server", "tests.dns_server"]

NOW = datetime(2026, 6, 1, tzinfo=UTC)


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


# TXT records: both grammars


def test_informal_record_gives_card_and_endpoint_urls():
    hint = txt_hint_parse(
        ["v=agent/1; c=https://example.com/card.json; u=https://example.com/a2a; x=1"]
    )
    assert hint.grammar == "agent/1"
    assert hint.card_url == "https://example.com/card.json"
    assert hint.endpoint_url == "https://example.com/a2a"
    assert hint.problems == ()


def test_informal_record_may_put_one_key_per_line_and_upper_case_keys():
    hint = txt_hint_parse(["V=agent/1\nC=https://example.com/card.json\nU=https://example.com/a2a"])
    assert (hint.card_url, hint.endpoint_url) == (
        "https://example.com/card.json",
        "https://example.com/a2a",
    )


def test_informal_record_with_plain_http_urls_keeps_the_record_but_not_the_urls():
    hint = txt_hint_parse(["v=agent/1; c=http://example.com/card.json; u=ftp://example.com/a2a"])
    assert hint.card_url is None
    assert hint.endpoint_url is None
    assert hint.problems == (
        "c=http://example.com/card.json must be an https URL; ignored",
        "u=ftp://example.com/a2a must be an https URL; ignored",
    )


def test_informal_record_with_a_key_twice_is_invalid():
    with pytest.raises(TxtHintError) as caught:
        txt_hint_parse(["v=agent/1; c=https://a.example/x.json; c=https://b.example/x.json"])
    assert caught.value.reason == "txt-invalid"
    assert "'c' appears twice" in caught.value.detail


def test_aid_record_for_a2a_gives_the_card_url():
    hint = txt_hint_parse(
        ["v=aid1;u=https://example.com/.well-known/agent-card.json;p=a2a;a=pat;s=Weather"],
        now=NOW,
    )
    assert hint.grammar == "aid1"
    assert hint.card_url == "https://example.com/.well-known/agent-card.json"
    assert hint.endpoint_url is None
    assert hint.fields["auth"] == "pat"
    assert hint.fields["desc"] == "Weather"


def test_aid_long_keys_are_read_like_their_aliases():
    hint = txt_hint_parse(
        [" version = aid1 ; URI = https://example.com/agent.json ; Proto = a2a ; desc = Hi "],
        now=NOW,
    )
    assert hint.card_url == "https://example.com/agent.json"
    assert hint.fields == {
        "version": "aid1",
        "uri": "https://example.com/agent.json",
        "proto": "a2a",
        "desc": "Hi",
    }


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ("v=aid1;u=https://e.com/c.json;uri=https://e.com/c.json;p=a2a", "both 'uri' and its"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;proto=a2a", "both 'proto' and its"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;p=mcp", "'p' appears twice"),
        ("v=aid1;p=a2a", "'uri' is missing"),
        ("v=aid1;u=https://e.com/c.json", "'proto' is missing"),
        ("v=aid1;u=http://e.com/c.json;p=a2a", "must be an https URL"),
        ("v=aid1;u=https://e.com/c.json;p=carrier-pigeon", "unsupported proto"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;a=password", "unknown auth token"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;s=" + "x" * 61, "longer than 60"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;d=http://e.com/docs", "docs http://e.com/docs"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;e=2026-01-01", "ending in Z"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;k=zBase58Key", "kid is required"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;k=zBase58Key;i=TooLong7", "1 to 6"),
        ("v=aid1;u=https://e.com/c.json;p=a2a;garbage", "not a key=value pair"),
        ("v=aid1;u=npx:weather;p=a2a", "must be an absolute URL"),
        ("v=aid1;u=https://e.com/ws;p=websocket", "must start with wss:"),
    ],
)
def test_invalid_aid_records_are_rejected_with_the_reason(record, why):
    with pytest.raises(TxtHintError) as caught:
        txt_hint_parse([record], now=NOW)
    assert caught.value.reason == "txt-invalid"
    assert why in caught.value.detail


def test_aid_record_for_another_protocol_is_valid_but_names_no_card():
    hint = txt_hint_parse(["v=aid1;u=https://example.com/mcp;p=mcp"], now=NOW)
    assert hint.card_url is None
    assert hint.problems == ("proto mcp: the record announces no A2A card",)


def test_aid_deprecation_in_the_future_warns_and_in_the_past_drops_the_hint():
    record = "v=aid1;u=https://example.com/agent.json;p=a2a;e=2026-09-01T00:00:00Z"
    future = txt_hint_parse([record], now=NOW)
    assert future.card_url == "https://example.com/agent.json"
    assert future.problems == ("deprecated from 2026-09-01T00:00:00Z",)

    past = txt_hint_parse([record], now=datetime(2027, 1, 1, tzinfo=UTC))
    assert past.card_url is None
    assert past.problems == ("deprecated since 2026-09-01T00:00:00Z; not used",)


def test_two_valid_records_of_one_grammar_are_ambiguous():
    with pytest.raises(TxtHintError) as caught:
        txt_hint_parse(
            ["v=aid1;u=https://a.example/c.json;p=a2a", "v=aid1;u=https://b.example/c.json;p=a2a"],
            now=NOW,
        )
    assert caught.value.reason == "txt-ambiguous"
    assert "2 valid aid1 TXT records" in caught.value.detail


def test_an_invalid_record_beside_a_valid_one_leaves_the_valid_one():
    hint = txt_hint_parse(
        ["v=aid1;u=http://a.example/c.json;p=a2a", "v=aid1;u=https://b.example/c.json;p=a2a"],
        now=NOW,
    )
    assert hint.card_url == "https://b.example/c.json"


def test_aid2_is_preferred_to_aid1_and_aid_to_the_informal_form():
    records = [
        "v=agent/1; c=https://informal.example/card.json",
        "v=aid1;u=https://one.example/card.json;p=a2a",
        "v=aid2;u=https://two.example/card.json;p=a2a",
    ]
    assert txt_hint_parse(records, now=NOW).grammar == "aid2"
    assert txt_hint_parse(records[:2], now=NOW).card_url == "https://one.example/card.json"


def test_unknown_grammars_are_ignored_and_logged(caplog):
    caplog.set_level("INFO", logger="protocols.a2a.registration.txt_records")
    records = ["v=spf1 include:_spf.example.com ~all", "v=agent1; card=https://e.com/card.json"]
    assert txt_hint_parse(records) is None
    assert "v=agent1; card=" in caplog.text
    assert txt_hint_parse([]) is None


# Domains


def test_card_resolve_refuses_a_malformed_domain_before_any_lookup(dns_server):
    with pytest.raises(DiscoveryError) as caught:
        card_resolve(domain="https://example.com/", resolver=dns_server.resolver())
    assert caught.value.reason == "invalid-domain"
    assert dns_server.queries == []


# DNS through a real (local) DNS server


def test_txt_records_joins_the_strings_of_each_record(dns_server):
    dns_server.records["_agent.example.com"] = [
        ["v=agent/1; c=https://example.com/", "cards/weather.json"],
        ["v=aid1;u=https://example.com/a.json;p=a2a"],
    ]
    records = txt_records("example.com", resolver=dns_server.resolver())
    assert sorted(records) == [
        "v=agent/1; c=https://example.com/cards/weather.json",
        "v=aid1;u=https://example.com/a.json;p=a2a",
    ]
    assert dns_server.queries == ["_agent.example.com"]


def test_no_such_name_and_no_txt_data_are_both_no_records(dns_server):
    assert txt_records("example.com", resolver=dns_server.resolver()) == []
    dns_server.records["_agent.example.com"] = []
    assert txt_records("example.com", resolver=dns_server.resolver()) == []


@pytest.mark.parametrize("behaviour", ["servfail", "silent"])
def test_a_failing_dns_server_is_a_dns_failure_not_an_empty_answer(dns_server, behaviour):
    dns_server.behaviour = behaviour
    with pytest.raises(DnsLookupError) as caught:
        txt_records("example.com", resolver=dns_server.resolver(lifetime=0.5))
    assert caught.value.reason == "dns-failure"
    assert "_agent.example.com." in caught.value.detail


def test_the_default_resolver_comes_from_settings(settings):
    settings.DISCOVERY_DNS_NAMESERVERS = ["192.0.2.53", "2001:db8::53"]
    settings.DISCOVERY_DNS_TIMEOUT = 1.5
    resolver = dns_resolver()
    assert resolver.nameservers == ["192.0.2.53", "2001:db8::53"]
    assert (resolver.timeout, resolver.lifetime) == (1.5, 1.5)


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
