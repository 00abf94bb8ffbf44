"""Filters alone over A2A cards' facts (bindings, streaming, push notifications, versions,
with tags and skills): two keys or more are found on the lean lane by the agents' filter
keys (registry.discovery.keyed), and every answer is the view's, byte for byte."""

import itertools
from urllib.parse import urlencode

import pytest

from bench.generate import card_generate
from protocols.a2a.registration.bulk import cards_bulk_import
from registry.agents.lifecycle import agent_retire
from registry.agents.models import Agent, CapabilityTag
from tests.registry.discovery.conftest import lane_answer, spy_answer, view_answer

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

KEYED = [
    "tag=finance&protocolBinding=JSONRPC",
    "tag=finance&protocolBinding=HTTP%2BJSON&streaming=false",
    "tag=nlp&streaming=true&sort=name&limit=3",
    "tag=analytics&protocolBinding=GRPC&sort=recent&limit=2",
    "protocolBinding=JSONRPC&streaming=true&pushNotifications=false&limit=5",
    "protocolBinding=JSONRPC&protocolVersion=1.0&sort=name&limit=4",
    "tag=support&protocolBinding=jsonrpc",  # a binding as no card writes it: none
]
NOT_KEYED = [
    "tag=finance&provider=Tyrell+Works",  # case-insensitive: the facts' table
    "streaming=maybe&tag=finance",  # the view's 400
    "protocolBinding=JSONRPC",  # one key: walked in the page's order
    "tag=finance&streaming=true&protocolBinding=JSONRPC&tag=",  # a repeated name
]


@pytest.fixture
def cards():
    assert cards_bulk_import(owner="crawler", cards=[card_generate(11, i) for i in range(80)]) == 80
    # One of KEYED's first query retired: its keys stay, discovery finds it no more.
    finance = CapabilityTag.objects.filter(value="finance").values("agent_id")
    jsonrpc = Agent.objects.filter(facets__kind="protocolBinding", facets__value="JSONRPC")
    return agent_retire(agent=jsonrpc.filter(pk__in=finance).order_by("name").first())


def test_fact_filters_alone_answer_as_the_view(cards, monkeypatch):
    from registry.discovery import planner

    found = []
    monkeypatch.setattr(planner, "keyed_find", spy_answer(planner.keyed_find, found))
    counts = []
    for query in KEYED + NOT_KEYED:
        path = f"/discover/agents?{query}"
        expected = view_answer(path)
        found.clear()
        answer, _ = lane_answer(path)
        assert answer == expected, path
        assert (found == [True]) == (query in KEYED), path
        if query in KEYED:
            counts.append(expected[2].count(b'"cardUrl"'))
            assert str(cards.pk).encode() not in answer[2], path
    assert counts[0] > 5 and counts[-1] == 0  # pages with agents, and one with none


def test_every_pair_of_a_cards_facts_finds_it(cards):
    """Any two of an agent's keys (a tag and a fact, or two facts) find it on the lane."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT agent_id, tsvector_to_array(keys) FROM registry_agentfilterkeys "
            "WHERE discoverable ORDER BY created_at DESC LIMIT 1"
        )
        ((pk, keys),) = cursor.fetchall()
    params = []
    for key in keys:
        kind, _, value = key[1:].partition(" ")
        if kind == "f":
            kind, _, value = value.partition(" ")
        if kind in ("tag", "protocolBinding", "streaming", "protocolVersion"):
            params.append((kind, value))
    pairs = [pair for pair in itertools.combinations(params, 2) if pair[0][0] != pair[1][0]]
    assert len(pairs) >= 3
    for pair in pairs:
        answer, asked_django = lane_answer(f"/discover/agents?{urlencode(pair)}&limit=100")
        assert not asked_django and answer[0] == 200, pair
        assert str(pk).encode() in answer[2], pair
