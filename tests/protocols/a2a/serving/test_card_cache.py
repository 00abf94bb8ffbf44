"""The lean lane's card cache (PostgreSQL): cards answered from the process's spool, and
every committed card write, from any process, forgotten by every cache."""

import json

import psycopg
import pytest
from django.db import connection

from protocols.a2a.cards.selectors import CARDS_CHANNEL, card_cache
from registry.fastpath.lean import LeanApplication
from registry.fastpath.notices import own_connection_params
from registry.fastpath.spool import Spool
from tests.registry.fastpath.test_lean import Recorder, call
from tests.registry.fastpath.test_notices import eventually

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY"),
    pytest.mark.django_db(transaction=True),  # writes commit, so notices are sent
]


@pytest.fixture
def cached(monkeypatch, tmp_path):
    monkeypatch.setattr(card_cache, "max_bytes", 2**20)
    monkeypatch.setattr(card_cache, "spool", Spool(2**20, str(tmp_path)))
    monkeypatch.setattr(card_cache.listener, "retry_seconds", 0)
    card_cache.forget(None)
    yield card_cache
    card_cache.listener.close()
    card_cache.forget(None)


@pytest.fixture
def app():
    return LeanApplication(Recorder())


@pytest.fixture
def agent_id(alice, make_card) -> str:
    return alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]


def other_process():
    """A connection of its own, as another web process or job worker has."""
    return psycopg.connect(**own_connection_params(connection))


def name_of(body: bytes) -> str:
    return json.loads(body)["name"]


def test_a_fetched_card_is_answered_from_the_cache(
    cached, app, agent_id, django_assert_num_queries
):
    path = f"/a2a/agents/{agent_id}"
    first = call(app, "GET", path)
    with django_assert_num_queries(0):
        again = call(app, "GET", path)
    assert again == first and first[0] == 200
    assert cached.spool.get(str(agent_id)) is not None


def test_a_change_committed_elsewhere_is_forgotten_when_its_notice_comes(cached, app, agent_id):
    path = f"/a2a/agents/{agent_id}"
    assert name_of(call(app, "GET", path)[2]) == "Weather Agent"
    renamed = call(app, "GET", path)[2].replace(b"Weather Agent", b"Renamed Agent")
    with other_process() as other:
        other.execute(
            "UPDATE a2a_carddocument SET body = %s WHERE agent_id = %s", [renamed, agent_id]
        )
        other.commit()
        # Without a notice the cache would not know: it still answers what it read.
        assert name_of(call(app, "GET", path)[2]) == "Weather Agent"
        other.execute("SELECT pg_notify(%s, %s)", [CARDS_CHANNEL, str(agent_id)])
        other.commit()
    assert eventually(lambda: name_of(call(app, "GET", path)[2]) == "Renamed Agent")


def test_card_writes_through_the_api_reach_the_cache(cached, app, agent_id, alice, make_card):
    path = f"/a2a/agents/{agent_id}"
    assert name_of(call(app, "GET", path)[2]) == "Weather Agent"
    assert alice.put(path, {"card": make_card(name="Renamed")}, format="json").status_code == 200
    assert name_of(call(app, "GET", path)[2]) == "Renamed"
    assert alice.delete(f"/agents/{agent_id}").status_code == 204  # retired
    assert call(app, "GET", path)[0] == 410
    assert cached.spool.get(str(agent_id)) is None


def test_deprecation_headers_and_pinned_versions_go_through_the_cache(
    cached, app, agent_id, alice, make_card, django_assert_num_queries
):
    path = f"/a2a/agents/{agent_id}"
    assert "Deprecation" not in call(app, "GET", path)[1]
    body = {"reason": "old", "sunsetAt": "2030-01-31T00:00:00Z"}
    assert alice.post(f"/agents/{agent_id}/deprecate", body, format="json").status_code == 200
    headers = call(app, "GET", path)[1]
    assert headers["Sunset"] == "Thu, 31 Jan 2030 00:00:00 GMT"
    with django_assert_num_queries(0):
        assert call(app, "GET", path)[1] == headers
    assert alice.put(path, {"card": make_card(name="Two")}, format="json").status_code == 200
    first = call(app, "GET", f"{path}?version=1")
    with django_assert_num_queries(0):
        assert call(app, "GET", f"{path}?version=1") == first
    assert name_of(first[2]) == "Weather Agent" and name_of(call(app, "GET", path)[2]) == "Two"
    assert cached.spool.get(f"{agent_id}@1") is not None


def test_without_a_listener_every_fetch_reads_the_database(
    cached, app, agent_id, django_assert_num_queries
):
    cached.listener.retry_at = float("inf")  # as if PostgreSQL refused to listen
    cached.listener.retry_seconds = float("inf")
    path = f"/a2a/agents/{agent_id}"
    for _ in range(2):
        with django_assert_num_queries(1):
            assert call(app, "GET", path)[0] == 200
    assert len(cached.spool) == 0
