"""Discovery at scale: search semantics, facets, sorting, cursors, sync, caching headers,
query counts, and the bulk import that loads large populations."""

import base64
import copy
import json
import threading
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

from registry.access.models import AuditEntry
from registry.agents.models import Agent, AgentSearchText, Tombstone
from registry.discovery.models import AgentSearchVector
from tests.conftest import BASE_CARD

# Populations are registered by their A2A cards (the a2a app is imported where used, so
# that this module still loads with the core alone).
pytestmark = [pytest.mark.django_db, pytest.mark.apps("a2a")]


def cards_bulk_import(**kwargs) -> int:
    from protocols.a2a.registration.bulk import cards_bulk_import

    return cards_bulk_import(**kwargs)


def card(name, *, url, skills=(), provider="Acme", binding="JSONRPC", version="1.0", **extra):
    doc = copy.deepcopy(BASE_CARD)
    doc["name"] = name
    doc["description"] = extra.pop("description", f"{name} agent.")
    doc["provider"] = {"organization": provider, "url": "https://acme.example"}
    doc["capabilities"] = {"streaming": False}
    doc["supportedInterfaces"] = [
        {"url": url, "protocolBinding": binding, "protocolVersion": version}
    ]
    doc["skills"] = [
        {"id": sid, "name": sname, "description": sdesc, "tags": list(tags)}
        for sid, sname, sdesc, tags in skills
    ] or doc["skills"]
    doc.update(extra)
    return doc


@pytest.fixture
def population(alice):
    cards = [
        card(
            "Atlas Router",
            url="https://atlas.example/a2a",
            skills=[
                (
                    "route",
                    "Route planning",
                    "Plans truck routes across Europe.",
                    ["logistics", "maps"],
                )
            ],
            capabilities={"streaming": True},
        ),
        card(
            "Bard Writer",
            url="https://bard.example/a2a",
            provider="Muse Labs",
            skills=[("poem", "Poetry", "Writes sonnets and haiku.", ["writing", "nlp"])],
            securitySchemes={
                "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}
            },
            securityRequirements=[{"schemes": {"key": {"list": []}}}],
        ),
        card(
            "Cargo Tracker",
            url="https://cargo.example/a2a",
            binding="HTTP+JSON",
            skills=[
                (
                    "track",
                    "Shipment tracking",
                    "Tracks containers by number.",
                    ["logistics", "tracking"],
                )
            ],
            capabilities={"extensions": [{"uri": "https://ext.example/geo/v1"}]},
        ),
        card(
            "Dune Oracle",
            url="https://dune.example/a2a",
            version="0.3",
            description="Answers questions about deserts and route water supplies.",
            skills=[("ask", "Ask", "Answers questions.", ["qa"])],
        ),
    ]
    ids = {}
    for doc in cards:
        response = alice.post("/a2a/agents", {"card": doc}, format="json")
        assert response.status_code == 201, response.content
        ids[doc["name"]] = response.json()["id"]
    return ids


def names(response):
    assert response.status_code == 200, response.content
    return [a["name"] for a in response.json()["results"]]


def names_of_every_page(anon, response):
    """The names on this page and on every page its next links lead to, in order."""
    seen = names(response)
    while next_link := response.json()["next"]:
        response = anon.get(next_link)
        seen += names(response)
    return seen


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


def test_cursors_stay_correct_while_agents_are_added(alice, anon, native_payload):
    for index in range(12):
        alice.post("/agents", native_payload(name=f"Old {index:02d}"), format="json")
    first = anon.get("/discover/agents", {"limit": 5}).json()
    seen = [a["name"] for a in first["results"]]
    for index in range(6):  # newer agents sort before the cursor: never served on later pages
        alice.post("/agents", native_payload(name=f"New {index}"), format="json")
    seen += names_of_every_page(anon, anon.get(first["next"]))
    assert sorted(seen) == [f"Old {index:02d}" for index in range(12)]


@pytest.mark.django_db(transaction=True)
def test_cursors_stay_correct_under_concurrent_inserts(live_server, make_key, native_payload):
    import httpx

    key = make_key("writer")
    with httpx.Client(
        base_url=live_server.url, timeout=30, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        for index in range(30):
            client.post("/agents", json=native_payload(name=f"Base {index:02d}"))
        stop = threading.Event()

        def writer():
            count = 0
            with httpx.Client(
                base_url=live_server.url, timeout=30, headers={"Authorization": f"Bearer {key}"}
            ) as own:
                while not stop.is_set() and count < 40:
                    own.post("/agents", json=native_payload(name=f"Concurrent {count}"))
                    count += 1

        thread = threading.Thread(target=writer)
        thread.start()
        seen = []
        url = "/discover/agents?limit=4&sort=name"
        while url:
            body = client.get(url).json()
            seen += [a["name"] for a in body["results"]]
            url = body["next"]
        stop.set()
        thread.join()
    base = [name for name in seen if name.startswith("Base")]
    assert base == [f"Base {index:02d}" for index in range(30)]  # each once, in order
    assert len(seen) == len(set(seen))


def test_updated_since_is_a_change_feed_with_tombstones(alice, anon, native_payload):
    keep = alice.post("/agents", native_payload(name="Keeper"), format="json").json()
    gone = alice.post("/agents", native_payload(name="Goner"), format="json").json()
    since = keep["createdAt"]
    alice.delete(f"/agents/{gone['id']}")
    alice.patch(f"/agents/{keep['id']}", {"description": "changed"}, format="json")
    body = anon.get("/discover/agents", {"updated_since": since}).json()
    assert body["sort"] == "updated"
    assert [a["name"] for a in body["results"]] == ["Keeper"]
    assert [d["id"] for d in body["deleted"]] == [gone["id"]]
    assert Tombstone.objects.get().agent_id.hex == gone["id"].replace("-", "")

    later = anon.get("/discover/agents", {"updated_since": "2999-01-01T00:00:00Z"}).json()
    assert later["results"] == [] and later["deleted"] == []
    bad = anon.get("/discover/agents", {"updated_since": "yesterday"})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["path"] == "updated_since"


def test_cards_have_etag_last_modified_and_answer_304(alice, anon, make_card):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    first = anon.get(f"/a2a/agents/{agent_id}")
    assert first["ETag"] and first["Last-Modified"] and "max-age" in first["Cache-Control"]
    from protocols.a2a.models import CardDocument

    stored = CardDocument.objects.get(agent_id=agent_id)
    assert first["ETag"] == f'"{stored.sha256}"'
    assert first["Last-Modified"] == http_date(stored.updated_at.timestamp())
    assert first.content == bytes(stored.body)
    again = anon.get(f"/a2a/agents/{agent_id}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert again.content == b""
    since = anon.get(f"/a2a/agents/{agent_id}", HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert since.status_code == 304
    alice.put(f"/a2a/agents/{agent_id}", {"card": make_card(name="Changed")}, format="json")
    changed = anon.get(f"/a2a/agents/{agent_id}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert json.loads(changed.content)["name"] == "Changed"


def test_listings_have_etag_last_modified_and_answer_304(alice, anon, native_payload):
    alice.post("/agents", native_payload(), format="json")
    first = anon.get("/discover/agents")
    assert first["ETag"] and first["Last-Modified"]
    assert anon.get("/discover/agents", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    alice.post("/agents", native_payload(name="Another"), format="json")
    assert anon.get("/discover/agents", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200


def test_serving_a_card_is_one_query(alice, anon, make_card, django_assert_num_queries):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    with django_assert_num_queries(1):
        assert anon.get(f"/a2a/agents/{agent_id}").status_code == 200


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements")
@pytest.mark.django_db(transaction=True)  # autocommit, as a server's card reads run
def test_the_card_read_is_prepared_on_postgresql_and_survives_a_deallocation(
    alice, anon, make_card
):
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, statement FROM pg_prepared_statements")
            return [
                name for name, statement in cursor.fetchall() if "a2a_carddocument" in statement
            ]

    assert anon.get(f"/a2a/agents/{agent_id}").status_code == 200
    assert prepared() == ["registry_card_read"]  # prepared at its first run
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")  # as psycopg does after a rollback
    assert prepared() == []
    assert anon.get(f"/a2a/agents/{agent_id}").status_code == 200  # prepared again
    assert prepared() == ["registry_card_read"]


def test_listing_queries_do_not_grow_with_results(
    alice, anon, native_payload, django_assert_max_num_queries
):
    for index in range(15):
        alice.post("/agents", native_payload(name=f"A{index}"), format="json")
    # the page's keys (on PostgreSQL, one query per relevance tier: 3), its rows, 2
    # prefetches, last change; for the facets: the id-slice probe and one statement
    with django_assert_max_num_queries(9):
        body = anon.get(
            "/discover/agents", {"mode": "keyword", "q": "summarize", "facets": "tag"}
        ).json()
    assert len(body["results"]) == 15


def test_bulk_import_creates_searchable_agents_and_skips_duplicates(anon):
    cards = [
        card(
            f"Bulk {i}",
            url=f"https://bulk-{i}.example/a2a",
            skills=[(f"s{i}", "Bulk skill", "Imported in bulk.", ["bulk"])],
        )
        for i in range(30)
    ]
    assert cards_bulk_import(owner="crawler", cards=cards) == 30
    assert cards_bulk_import(owner="crawler", cards=cards[:5]) == 0
    assert Agent.objects.filter(owner="crawler").count() == 30
    found = anon.get("/discover/agents", {"q": "bulk", "limit": 100, "facets": "tag"}).json()
    assert len(found["results"]) == 30
    assert found["facets"]["tag"] == [{"value": "bulk", "count": 30}]
    agent = Agent.objects.get(name="Bulk 7")
    assert json.loads(anon.get(f"/a2a/agents/{agent.id}").content) == cards[7]
    # The same audit entries as one registration at a time: one per agent created.
    created = AuditEntry.objects.filter(action="agent.create", object_repr__startswith="Bulk ")
    assert created.count() == 30
    assert created.filter(agent_id=agent.id).get().after["source"] == "a2a-card"


def test_import_cards_command_reads_json_lines(tmp_path, capsys):
    path = tmp_path / "crawl.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(card(f"Line {i}", url=f"https://line-{i}.example/a2a")) for i in range(4)
        )
    )
    call_command("import_cards", str(path), "--owner", "crawler", "--batch", "3")
    assert "Imported 4 agents from 4 cards" in capsys.readouterr().out
    assert Agent.objects.filter(owner="crawler").count() == 4


@pytest.mark.parametrize(
    "value", ["2026-02-30T00:00:00Z", "2355-08-25T19:38:17-18:38", "9999-12-31T23:59:59-23:59"]
)
def test_impossible_or_extreme_since_times_are_400_or_empty(anon, value):
    response = anon.get("/discover/agents", {"updated_since": value})
    assert response.status_code in (200, 400)
    if response.status_code == 400:
        assert response.json()["errors"][0]["path"] == "updated_since"


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


def test_change_feed_pages_report_each_deletion_once(alice, anon, native_payload):
    first = alice.post("/agents", native_payload(name="F0"), format="json").json()
    since = first["createdAt"]
    ids = [first["id"]] + [
        alice.post("/agents", native_payload(name=f"F{i}"), format="json").json()["id"]
        for i in range(1, 6)
    ]
    for agent_id in ids[1:5:2]:
        alice.delete(f"/agents/{agent_id}")
    alice.patch(f"/agents/{ids[0]}", {"description": "touched"}, format="json")
    deleted, seen = [], []
    body = anon.get("/discover/agents", {"updated_since": since, "limit": 1}).json()
    while True:
        seen += [a["id"] for a in body["results"]]
        deleted += [d["id"] for d in body["deleted"]]
        if not body["next"]:
            break
        body = anon.get(body["next"]).json()
    assert sorted(deleted) == sorted(ids[1:5:2])
    assert sorted(seen) == sorted(set(ids) - set(ids[1:5:2]))


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


@pytest.mark.parametrize(
    "cursor",
    [
        ["relevance", [5, "not a time"], "00000000-0000-0000-0000-000000000000"],
        ["relevance", [1, "2026-02-30T00:00:00Z"], "00000000-0000-0000-0000-000000000000"],
        ["relevance", {"a": 1}, "00000000-0000-0000-0000-000000000000"],
        ["relevance", True, "00000000-0000-0000-0000-000000000000"],
        ["name", 3, "00000000-0000-0000-0000-000000000000"],
        ["recent", "2026-02-30T00:00:00Z", "00000000-0000-0000-0000-000000000000"],
    ],
)
def test_a_forged_cursor_is_a_400(anon, population, cursor):
    raw = json.dumps(cursor).encode()
    token = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    sort = cursor[0]
    params = {"q": "route", "cursor": token, "sort": sort}
    response = anon.get("/discover/agents", params)
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["path"] == "cursor"


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
