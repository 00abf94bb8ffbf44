"""Discovery bootstrap's TXT hints: both grammars (the informal one and AID), a malformed
domain refused, and TXT records read through a real local DNS server."""

from datetime import UTC, datetime

import pytest

from protocols.a2a.registration.bootstrap import card_resolve
from protocols.a2a.registration.txt_records import (
    DiscoveryError,
    DnsLookupError,
    TxtHintError,
    dns_resolver,
    txt_hint_parse,
    txt_records,
)

pytest_plugins = ["tests.https_server", "tests.dns_server"]

NOW = datetime(2026, 6, 1, tzinfo=UTC)


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
