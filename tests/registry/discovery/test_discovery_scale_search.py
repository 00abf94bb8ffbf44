"""Discovery at scale, its search: text over names, descriptions and tags, relevance and its
tiers, sorting, card facts and filters, facet counts (exact and estimated), the text index
following renames and deletions, and the filter keys following capability changes."""

from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.agents.models import Agent, AgentSearchText
from registry.discovery.models import AgentSearchVector
from tests.registry.discovery.conftest import card, cards_bulk_import, names, names_of_every_page

# Populations are registered by their A2A cards (the a2a app is imported where used, so
# that this module still loads with the core alone).
pytestmark = [pytest.mark.django_db, pytest.mark.apps("a2a")]


def test_text_search_covers_skill_names_descriptions_and_tags(anon, population):
    assert names(anon.get("/discover/agents", {"mode": "keyword", "q": "sonnets"})) == [
        "Bard Writer"
    ]
    assert names(anon.get("/discover/agents", {"mode": "keyword", "q": "poetry"})) == [
        "Bard Writer"
    ]
    assert sorted(names(anon.get("/discover/agents", {"mode": "keyword", "q": "logistics"}))) == [
        "Atlas Router",
        "Cargo Tracker",
    ]
    assert names(anon.get("/discover/agents", {"mode": "keyword", "q": "contain"})) == [
        "Cargo Tracker"
    ]  # prefix
    assert names(anon.get("/discover/agents", {"mode": "keyword", "q": "truck europe"})) == [
        "Atlas Router"
    ]
    assert names(anon.get("/discover/agents", {"mode": "keyword", "q": "truck haiku"})) == []


def test_relevance_puts_the_better_match_first(anon, population):
    # "route" is Atlas's skill name, tag-free description word and skill id; Dune only
    # mentions it once in its description.
    found = names(anon.get("/discover/agents", {"mode": "keyword", "q": "route"}))
    assert found == ["Atlas Router", "Dune Oracle"]
    assert (
        anon.get("/discover/agents", {"mode": "keyword", "q": "route"}).json()["sort"]
        == "relevance"
    )


def test_sort_by_name_and_recent(anon, population):
    assert names(anon.get("/discover/agents", {"sort": "name"})) == [
        "Atlas Router",
        "Bard Writer",
        "Cargo Tracker",
        "Dune Oracle",
    ]
    assert names(anon.get("/discover/agents", {"sort": "recent"})) == [
        "Dune Oracle",
        "Cargo Tracker",
        "Bard Writer",
        "Atlas Router",
    ]
    response = anon.get("/discover/agents", {"sort": "relevance"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "sort"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"skill": "track"}, ["Cargo Tracker"]),
        ({"protocolBinding": "HTTP+JSON"}, ["Cargo Tracker"]),
        ({"protocolVersion": "0.3"}, ["Dune Oracle"]),
        ({"provider": "muse labs"}, ["Bard Writer"]),
        ({"streaming": "true"}, ["Atlas Router"]),
        ({"extension": "https://ext.example/geo/v1"}, ["Cargo Tracker"]),
        ({"securityScheme": "apiKey"}, ["Bard Writer"]),
        ({"pushNotifications": "true"}, []),
    ],
)
def test_card_facts_are_filters(anon, population, params, expected):
    assert sorted(names(anon.get("/discover/agents", params))) == expected


def test_skill_filter_takes_a_native_capability_id(alice, anon, native_payload):
    agent = alice.post("/agents", native_payload(), format="json").json()
    found = anon.get("/discover/agents", {"skill": agent["capabilities"][0]["id"]})
    assert names(found) == ["Summarizer"]


def test_facet_counts_follow_the_query(anon, population):
    body = anon.get("/discover/agents", {"facets": "tag,protocolBinding,provider,streaming"}).json()
    facets = body["facets"]
    assert facets["tag"][0] == {"value": "logistics", "count": 2}
    assert {"value": "JSONRPC", "count": 3} in facets["protocolBinding"]
    assert {"value": "Muse Labs", "count": 1} in facets["provider"]
    assert {"value": "true", "count": 1} in facets["streaming"]

    narrowed = anon.get("/discover/agents", {"q": "logistics", "facets": "tag"}).json()
    assert {f["value"]: f["count"] for f in narrowed["facets"]["tag"]} == {
        "logistics": 2,
        "maps": 1,
        "tracking": 1,
    }
    assert body["facetsExact"] is True and narrowed["facetsExact"] is True
    response = anon.get("/discover/agents", {"facets": "tag,colour"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "facets"
    assert "facetsExact" not in anon.get("/discover/agents").json()


@pytest.mark.apps("a2a", "aap")
def test_every_facet_is_counted_in_one_statement(anon, population, django_assert_max_num_queries):
    every = "tag,protocolBinding,protocolVersion,provider,transport,protocol,extension,"
    every += "securityScheme,streaming,pushNotifications,specVersion,aap"
    with django_assert_max_num_queries(7):  # the page (4), last change, probe, the facets
        body = anon.get("/discover/agents", {"facets": every}).json()
    counts = {
        name: {f["value"]: f["count"] for f in values} for name, values in body["facets"].items()
    }
    assert counts == {
        "tag": {"logistics": 2, "maps": 1, "tracking": 1, "writing": 1, "nlp": 1, "qa": 1},
        "protocolBinding": {"JSONRPC": 3, "HTTP+JSON": 1},
        "protocolVersion": {"1.0": 3, "0.3": 1},
        "provider": {"Acme": 3, "Muse Labs": 1},
        "transport": {"Http": 4},  # the endpoints' transport, whatever the binding
        "protocol": {"A2A": 4},
        "extension": {"https://ext.example/geo/v1": 1},
        "securityScheme": {"apiKey": 1},
        "streaming": {"false": 3, "true": 1},
        "pushNotifications": {"false": 4},
        "specVersion": counts["specVersion"],
        "aap": {},  # dealer agents only (tests/protocols/aap counts them)
    }
    assert sum(counts["specVersion"].values()) == 4
    # Most frequent first, ties by value.
    assert [f["value"] for f in body["facets"]["tag"]][:3] == ["logistics", "maps", "nlp"]


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"q": "a", "tag": "logistics"}, {"logistics": 2, "maps": 1, "tracking": 1}),
        ({"q": "a", "tag": "logistics", "streaming": "true"}, {"logistics": 1, "maps": 1}),
        ({"q": "a", "capability": "poetry"}, {"writing": 1, "nlp": 1}),
        ({"q": "route", "sort": "name"}, {"logistics": 1, "maps": 1, "qa": 1}),
    ],
)
def test_facet_counts_of_text_queries_with_filters(anon, population, params, expected):
    body = anon.get("/discover/agents", {**params, "facets": "tag", "mode": "keyword"}).json()
    assert {f["value"]: f["count"] for f in body["facets"]["tag"]} == expected


def test_facet_counts_beyond_the_exact_limit_are_estimated_from_a_uniform_sample(
    anon, settings, django_assert_max_num_queries
):
    """More matches than DISCOVERY_FACET_EXACT (k - 1): a probe of the first 1/64 of the id
    space picks a slice, 1/2**s of it (that one if it holds k), and the counts are those of
    the k matches with the smallest ids times (k - 1) / (k u), u being the largest of them
    as a fraction of the id space; or, when the slice holds fewer than k, those of the
    slice times 2**s."""
    tags = ["alpha", "beta", "gamma"]
    cards = [
        card(
            f"Sampled {i}",
            url=f"https://sampled-{i}.example/a2a",
            skills=[(f"s{i}", "Sampled skill", "Counted in samples.", [tags[i % 3]])],
        )
        for i in range(600)
    ]
    cards_bulk_import(owner="crawler", cards=cards)
    settings.DISCOVERY_FACET_EXACT = 10
    with django_assert_max_num_queries(10):  # the page (up to 7), last change, probe, count
        body = anon.get(
            "/discover/agents", {"mode": "keyword", "q": "sampled", "facets": "tag"}
        ).json()
    assert body["facetsExact"] is False
    counted = {f["value"]: f["count"] for f in body["facets"]["tag"]}

    k = 11
    agents = sorted(Agent.objects.filter(owner="crawler").values_list("id", "name"))
    probe = min(k, sum(1 for pk, _ in agents if pk.int < 1 << 122))
    shift = 0 if probe < k else 6
    while probe < k and (probe << 6) >> (shift + 1) >= 2 * k:
        shift += 1
    in_slice = [(pk, name) for pk, name in agents if pk.int < 1 << (128 - shift)]
    sample = in_slice[:k]
    in_sample = Counter(tags[int(name.split()[1]) % 3] for _, name in sample)
    kmv = (k - 1) / (k * (sample[-1][0].int / 2**128))
    scale = kmv if len(sample) == k else 1 << shift
    assert counted == {tag: round(n * scale) for tag, n in in_sample.items()}

    settings.DISCOVERY_FACET_EXACT = 1000
    exact = anon.get(
        "/discover/agents", {"mode": "keyword", "q": "sampled", "facets": "tag"}
    ).json()
    assert exact["facetsExact"] is True
    assert {f["value"]: f["count"] for f in exact["facets"]["tag"]} == {t: 200 for t in tags}


@pytest.mark.parametrize("extra", [{}, {"tag": "logistics"}])
def test_relevance_pages_walk_every_match_once(anon, population, extra):
    params = {"q": "route", "limit": 1, **extra} if not extra else {"q": "a", "limit": 1, **extra}
    expected = sorted(names(anon.get("/discover/agents", {**params, "limit": 100})))
    assert expected
    seen = names_of_every_page(anon, anon.get("/discover/agents", params))
    assert sorted(seen) == expected
    assert len(seen) == len(set(seen))


def test_relevance_with_a_filter_keeps_only_filtered_matches(anon, population):
    found = names(anon.get("/discover/agents", {"mode": "keyword", "q": "tracks", "tag": "maps"}))
    assert found == []
    found = names(
        anon.get("/discover/agents", {"mode": "keyword", "q": "route", "tag": "logistics"})
    )
    assert found == ["Atlas Router"]


def test_the_text_index_follows_renames_and_deletions(alice, anon, native_payload):
    agent_id = alice.post("/agents", native_payload(name="Quokka Finder"), format="json").json()[
        "id"
    ]
    assert names(anon.get("/discover/agents", {"q": "quokka"})) == ["Quokka Finder"]
    alice.patch(f"/agents/{agent_id}", {"name": "Wombat Finder"}, format="json")
    assert names(anon.get("/discover/agents", {"q": "quokka"})) == []
    assert names(anon.get("/discover/agents", {"q": "wombat"})) == ["Wombat Finder"]
    assert alice.delete(f"/agents/{agent_id}").status_code == 204
    assert names(anon.get("/discover/agents", {"q": "wombat"})) == []
    if connection.vendor == "postgresql":  # the narrow vector table is kept by triggers
        assert not AgentSearchVector.objects.filter(agent_id=agent_id).exists()
        alice.post("/agents", native_payload(name="Numbat"), format="json")
        assert AgentSearchVector.objects.count() == AgentSearchText.objects.count() == 1


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"q": "route", "capability": "route planning"}, ["Atlas Router"]),
        ({"q": "route", "capability": "  ROUTE Planning "}, ["Atlas Router"]),
        ({"q": "route", "capability": "route"}, []),  # a name is matched whole
        ({"q": "tracks", "tag": "LOGISTICS"}, ["Cargo Tracker"]),
        ({"q": "a", "tag": "logistics"}, ["Atlas Router", "Cargo Tracker"]),
        ({"q": "a", "tag": "logistics", "capability": "shipment tracking"}, ["Cargo Tracker"]),
        ({"q": "a", "tag": "logistics", "provider": "Acme"}, ["Atlas Router", "Cargo Tracker"]),
        ({"q": "a", "tag": "logistics", "streaming": "true"}, ["Atlas Router"]),
        ({"q": "answers", "capability": "ask", "protocolVersion": "0.3"}, ["Dune Oracle"]),
        ({"q": "route", "capability": "x" * 3000}, []),  # too long to be a key
        ({"q": "capability"}, []),  # keys are no words
        ({"q": "tag"}, []),
    ],
)
def test_text_with_capability_and_tag_filters(anon, population, params, expected):
    by_relevance = names(anon.get("/discover/agents", {**params, "sort": "relevance"}))
    assert sorted(by_relevance) == expected
    assert names(anon.get("/discover/agents", {**params, "sort": "name"})) == expected


def test_capability_and_tag_filters_join_the_text_index_query(anon, population):
    """PostgreSQL answers text + capability + tag from the GIN index alone: the ranked
    query asks for the keys and checks no capability table."""
    with CaptureQueriesContext(connection) as queries:
        response = anon.get(
            "/discover/agents",
            {"mode": "keyword", "q": "route", "capability": "Route planning", "tag": "maps"},
        )
    assert names(response) == ["Atlas Router"]
    if connection.vendor == "postgresql":
        ranked = queries.captured_queries[0]["sql"]
        assert "~capability route planning" in ranked and "~tag maps" in ranked
        assert "registry_capability" not in ranked


def test_the_filter_keys_follow_capability_changes(alice, anon, native_payload):
    payload = native_payload(
        name="Keyed", capabilities=[{"name": "Old Skill", "tags": ["Alpha", "beta"]}]
    )
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    assert AgentSearchText.objects.get(agent_id=agent_id).keys == [
        "~capability old skill",
        "~n keyed",
        "~t alpha",
        "~t beta",
        "~t keyed",
        "~t old",
        "~t skill",
        "~tag alpha",
        "~tag beta",
    ]
    assert names(anon.get("/discover/agents", {"q": "keyed", "tag": "alpha"})) == ["Keyed"]
    changed = [{"name": "New Skill", "tags": ["gamma"]}]
    assert (
        alice.patch(f"/agents/{agent_id}", {"capabilities": changed}, format="json").status_code
        == 200
    )
    for params, expected in [
        ({"tag": "alpha"}, []),
        ({"capability": "old skill"}, []),
        ({"tag": "gamma"}, ["Keyed"]),
        ({"capability": "new skill"}, ["Keyed"]),
    ]:
        assert names(anon.get("/discover/agents", {"q": "keyed", **params})) == expected


def test_relevance_tiers_name_then_titles_then_the_rest(alice, anon, native_payload):
    """PostgreSQL: agents whose name has every query word first, then those whose name,
    capability names or tags have them, then the rest; newest first within a tier. SQLite
    ranks the same agents by bm25."""

    def register(name, description="", capability="other", tags=()):
        payload = native_payload(
            name=name,
            description=description,
            capabilities=[{"name": capability, "tags": list(tags)}],
        )
        assert alice.post("/agents", payload, format="json").status_code == 201

    register("Zephyr Agent")
    register("Wind One", capability="Zephyr routing")
    register("Wind Two", description="Handles zephyr winds.")
    register("Wind Three", description="Zephyr, zephyr and zephyr again.")
    register("Wind Four", tags=["zephyrs"])
    register("Calm", description="No wind at all.")
    expected = ["Zephyr Agent", "Wind Four", "Wind One", "Wind Three", "Wind Two"]
    found = names(anon.get("/discover/agents", {"mode": "keyword", "q": "zephyr"}))
    walked = names_of_every_page(
        anon, anon.get("/discover/agents", {"mode": "keyword", "q": "zephyr", "limit": 2})
    )
    if connection.vendor == "postgresql":
        assert found == expected
        assert walked == expected
    else:
        assert sorted(found) == sorted(expected)
        assert sorted(walked) == sorted(expected)
    # Every word counts: none of these names has both; two agents' titles do.
    both = names(anon.get("/discover/agents", {"mode": "keyword", "q": "zephyr wind"}))
    expected = ["Wind Four", "Wind One", "Wind Three", "Wind Two"]
    assert both == expected if connection.vendor == "postgresql" else sorted(both) == expected


def test_the_migration_fills_the_keys_as_writes_do(alice, native_payload, make_card):
    """Migration 0007 fills existing agents' keys with its own copy of the rule (a
    migration may not import code that changes later); it must agree with the code's."""
    import importlib

    from django.apps import apps

    from registry.agents.text import search_keys_build

    alice.post("/agents", native_payload(name="Ünïcode Agent 2"), format="json")
    alice.post("/agents", native_payload(name="Bare", capabilities=[]), format="json")
    alice.post("/a2a/agents", {"card": make_card()}, format="json")
    written = dict(AgentSearchText.objects.values_list("agent_id", "keys"))
    assert len(written) == 3 and all(written.values())
    AgentSearchText.objects.update(keys=[])
    migration = importlib.import_module("registry.migrations.0007_search_keys")
    migration.keys_fill(apps, None)
    assert dict(AgentSearchText.objects.values_list("agent_id", "keys")) == written
    for agent in Agent.objects.prefetch_related("capabilities"):
        expected = search_keys_build(agent.name, agent.capabilities.all())
        assert written[agent.pk] == expected
