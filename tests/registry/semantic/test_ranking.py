"""How search by meaning ranks, on the demo's agents (``manage.py load_demo``) and a few
more: the same whatever the case of the words, agents with the query's words ahead of
agents found by meaning alone, a made-up word near nothing, and an agent that says nothing
of what it does (a name alone) not ahead of those that do."""

import io

import pytest
from django.core.management import call_command

from registry.discovery.hybrid import STRONG_COSINE, fuse

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(add_agent):
    call_command("load_demo", stdout=io.StringIO())
    return {
        "not_audio": add_agent("Not Audio", "", []),
        "scribe": add_agent(
            "Scribe",
            "Audio transcription for meetings, podcasts and calls.",
            [{"name": "Transcribe", "description": "Recorded audio into a written transcript."}],
        ),
        "relay": add_agent(
            "Zorblax Relay", "Relays zorblax messages between teams.", [{"name": "Relay"}]
        ),
        "vault": add_agent("Zorblax Vault", "Stores zorblax archives for teams.", []),
        # Near "ZORBLAX" in capitals as the model read them, not as near "zorblax".
        "capitals": add_agent("ZX LAB", "ZX Spectrum LAB.", []),
    }


def search(client, q, mode="hybrid"):
    response = client.get("/discover/agents", {"q": q, "mode": mode})
    assert response.status_code == 200, response.content
    return [agent["id"] for agent in response.json()["results"]]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_search_by_meaning_ignores_the_case_of_the_words(anon, demo, mode):
    lower = search(anon, "zorblax", mode)
    assert set(lower) == {demo["relay"], demo["vault"]}
    for q in ("ZORBLAX", "Zorblax"):
        assert search(anon, q, mode) == lower, q


def test_a_made_up_word_finds_no_agent_by_meaning(anon, demo):
    for q in ("qorvexian", "snarfblatt", "flurbnet"):
        assert search(anon, q) == [], q


def test_an_agent_of_a_name_alone_comes_after_those_that_say_what_they_do(anon, demo):
    for mode in ("semantic", "hybrid"):
        found = search(anon, "turn speech into text", mode)
        assert demo["scribe"] in found, mode
        assert demo["not_audio"] not in found[: found.index(demo["scribe"]) + 1], mode


def test_agents_with_the_words_come_before_agents_near_in_meaning_alone():
    weak, strong = STRONG_COSINE - 0.2, STRONG_COSINE + 0.1
    # The keyword order: a, b; by meaning: c (near, not strongly), then a.
    fused = fuse(["a", "b"], [("c", weak), ("a", weak)])
    assert [pk for pk, _ in fused] == ["a", "b", "c"]
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    # A strong meaning match ranks among the word matches, by its fused rank.
    assert [pk for pk, _ in fuse(["a", "b"], [("c", strong), ("a", weak)])] == ["a", "c", "b"]
