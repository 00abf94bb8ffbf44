"""The search words (PostgreSQL, migration 0026): every word of the agents' search vectors,
kept by the vector's trigger (at the end of a bulk write, once), and the query words searched
as the words they begin (``registry_search_query``), which finds exactly the agents that
the prefixes find."""

import random
import re

import pytest
from django.db import connection, transaction

from registry.agents.services import AgentInput, CapabilityInput, agents_bulk_create
from registry.discovery.filter_keys import filter_keys_at_end

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def words() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT word FROM registry_searchword")
        return {word for (word,) in cursor}


def vector_words() -> set[str]:
    """The words of every search vector (not the keys and marks, which begin with ~)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT w FROM registry_agentsearchvector, unnest(tsvector_to_array(tsv)) w"
        )
        return {word for (word,) in cursor if not word.startswith("~")}


def found(sql: str, param) -> set:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT agent_id FROM registry_agentsearchvector WHERE tsv @@ {sql}", [param]
        )
        return {pk for (pk,) in cursor}


def query(terms: list[str]) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT registry_search_query(%s::text[])::text", [terms])
        return cursor.fetchone()[0]


def register(client, payload) -> str:
    response = client.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_every_write_adds_its_words_and_a_new_word_is_found_by_its_start(alice, native_payload):
    register(alice, native_payload(name="Tide Tables", description="Harbour tides"))
    assert vector_words() <= words() and {"tide", "tables", "harbour", "tides"} <= words()
    # Another agent's new word: the next search finds it by its first letters.
    pk = register(alice, native_payload(name="Quokka Counter", description="Counts quokkas"))
    response = alice.get("/discover/agents", {"q": "quok", "mode": "keyword"})
    assert [a["id"] for a in response.json()["results"]] == [pk]
    assert query(["quok"]) == "'quokka' | 'quokkas'"
    # A rename adds the new name's words.
    assert (
        alice.patch(f"/agents/{pk}", {"name": "Wombat Counter"}, format="json").status_code == 200
    )
    assert "wombat" in words() and vector_words() <= words()
    response = alice.get("/discover/agents", {"q": "womb counter", "mode": "keyword"})
    assert [a["id"] for a in response.json()["results"]] == [pk]


def test_inside_a_bulk_write_the_words_are_added_once_at_its_end(alice):
    with transaction.atomic(), filter_keys_at_end():
        created = agents_bulk_create(
            owner="alice",
            items=[
                AgentInput(
                    name=f"Zephyrine {n}",
                    capabilities=[CapabilityInput(name="Sail", description="Katabatic winds")],
                )
                for n in range(3)
            ],
        )
        assert "zephyrine" not in words()  # noted, not added yet
    assert {"zephyrine", "katabatic", "winds", "sail"} <= words()
    assert vector_words() <= words()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM registry_agentsearchvector "
            "WHERE tsv @@ registry_search_query(%s::text[])",
            [["zeph", "kata"]],
        )
        assert cursor.fetchone()[0] == len(created)


def test_the_words_search_finds_exactly_what_the_prefixes_find(alice):
    # Many words sharing starts, some starts of more than 64 words (which stay prefixes),
    # numbers, words of other scripts and the parser's other tokens.
    rng = random.Random(7)
    stems = ["rout", "plan", "ent", "in", "tra", "a", "mo", "x"]
    vocabulary = [f"{stem}{rng.choice('aeiou')}{rng.randrange(100)}" for stem in stems * 12]
    vocabulary += ["entity", "enterprise", "entries", "incident", "incidents", "2024", "v2"]
    vocabulary += ["café", "naïve", "straße", "example.com", "foo-bar", "o'brien"]
    with transaction.atomic(), filter_keys_at_end():
        agents_bulk_create(
            owner="alice",
            items=[
                AgentInput(
                    name=" ".join(rng.sample(vocabulary, 3)),
                    description=" ".join(rng.sample(vocabulary, 4)),
                )
                for _ in range(60)
            ]
            # 70 words beginning "qq": a start of more than 64 words stays a prefix.
            + [AgentInput(name="Many", description=" ".join(f"qq{n}" for n in range(70)))],
        )
    assert vector_words() <= words()
    expanded = kept = 0
    for terms in [[s] for s in stems] + [
        ["ent", "in"],
        ["rout", "a"],
        ["caf"],
        ["stra"],
        ["2"],
        ["v"],
        ["example"],
        ["foo"],
        ["o"],
        ["zzz"],
        ["incident"],
        ["qq"],
        ["qq1"],
        ["2024"],
        ["mo", "x", "tra"],
    ]:
        prefixes = " & ".join(f"{term}:*" for term in terms)
        expected = found("to_tsquery('simple', %s)", prefixes)
        assert found("registry_search_query(%s::text[])", terms) == expected, terms
        text = query(terms)
        expanded += ":*" not in text
        kept += ":*" in text
    assert expanded and kept  # both forms were searched
    assert query(["qq"]) == "'qq':*"  # 70 words: the prefix
    assert query(["qq1"]).count("|") == 10  # qq1, qq10 ... qq19: the words


def test_a_word_of_quotes_and_backslashes_is_searched_as_it_is():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT registry_searchwords_add(array_to_tsvector(ARRAY[%s, %s, '~tag odd']))",
            ["odd'word\\x", "oddity"],
        )
    assert {"odd'word\\x", "oddity"} <= words() and "~tag odd" not in words()
    assert query(["odd"]) == "'odd''word\\\\x' | 'oddity'"


def plan(sql: str, params) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (VERBOSE) {sql}", params)
        return "\n".join(line for (line,) in cursor)


def test_the_planner_works_the_words_out_once_into_a_constant(alice, native_payload):
    """Migration 0027: the words' tsquery is a constant of the plan, not a call that each
    row a scan checks makes again, in the keys statement's form and the ORM's."""
    from registry.discovery.search import WORDS_SQL, text_matches

    register(alice, native_payload(name="Tide Tables", description="Harbour tides"))
    sql = f"SELECT agent_id FROM registry_agentsearchvector WHERE tsv @@ {WORDS_SQL}"
    shown = plan(sql, [["tid", "harb"]])
    assert "registry_search_query" not in shown
    # The constant, as EXPLAIN quotes it ('harbour' may also bring 'harbor', when an agent of
    # another test in the same process left that word in the words table).
    assert re.search(
        r"\( ''tide'' \| ''tides'' \) & (''harbour''|\( ''harbor'' \| ''harbour'' \))", shown
    )
    rows = text_matches("tid harb", None, keys=["~tag x"], tier=0)
    assert "registry_search_query" not in plan(*rows.query.sql_with_params())


def test_a_word_searched_before_an_agent_brings_it_is_found_after(alice, native_payload):
    """No plan keeps the words of an earlier search (the words are bound on the client, and
    each statement is planned with its own): the same search, asked again after a write,
    finds the new word."""
    register(alice, native_payload(name="Harbour Tides", description="Tides"))
    for _ in range(6):  # more than psycopg's prepare threshold (5)
        response = alice.get("/discover/agents", {"q": "narwh", "mode": "keyword"})
        assert response.json()["results"] == []
    assert query(["narwh"]) == "'narwh':*"
    pk = register(alice, native_payload(name="Narwhal Census", description="Counts narwhals"))
    assert query(["narwh"]) == "'narwhal' | 'narwhals'"
    response = alice.get("/discover/agents", {"q": "narwh", "mode": "keyword"})
    assert [a["id"] for a in response.json()["results"]] == [pk]
    response = alice.get("/discover/agents", {"q": "narwh"})  # hybrid: the lane's statement
    assert pk in [a["id"] for a in response.json()["results"]]
