"""Discovery at scale, its feeds: cursors while agents are added and forged ones, the change
feed and its tombstones, caching headers and 304s, query counts, and the bulk import that
loads large populations."""

import base64
import json
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils.http import http_date

from registry.access.models import AuditEntry
from registry.agents.models import Agent, Tombstone
from tests.registry.discovery.conftest import (
    card,
    cards_bulk_import,
    names_of_every_page,
)

# Populations are registered by their A2A cards (the a2a app is imported where used, so
# that this module still loads with the core alone).
pytestmark = [pytest.mark.django_db, pytest.mark.apps("a2a")]


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
