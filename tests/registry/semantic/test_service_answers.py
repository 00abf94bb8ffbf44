"""The embedding service (manage.py semantic_serve): the web workers ask it over its Unix
socket, and every process answers a query in the same order; without it, hybrid falls back to
keywords; a worker's kept connection, and what the service refuses or the worker does not
understand."""

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from registry.semantic import client
from registry.semantic.service import server_make

QUERIES = ["turn speech into text", "restaurant reservations and airline ticket booking", "rain"]


def order(anon, query, mode):
    response = anon.get("/discover/agents", {"q": query, "mode": mode})
    assert response.status_code == 200, response.content
    return [agent["id"] for agent in response.json()["results"]]


@pytest.fixture
def serving(tmp_path):
    """Start the service (its watcher looking every ``watch_seconds``); stopped after."""
    started = []

    def start(watch_seconds=1.0):
        server = server_make(str(tmp_path / "semantic.sock"), watch_seconds)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.fixture
def service(serving):
    return serving().server_address


@pytest.mark.django_db(transaction=True)
def test_the_service_answers_as_this_process_does(anon, population, service, settings):
    here = {(q, m): order(anon, q, m) for q in QUERIES for m in ("semantic", "hybrid")}
    settings.SEMANTIC_SOCKET = service
    asked = {(q, m): order(anon, q, m) for q in QUERIES for m in ("semantic", "hybrid")}
    assert asked == here
    assert any(len(found) > 1 for found in here.values())
    # The writers ask it for their vectors too.
    vectors = client.embed(["audio transcription"])
    assert len(vectors) == 1 and len(vectors[0]) == 256


@pytest.mark.django_db(transaction=True)
def test_the_services_hits_carry_the_same_ids_and_cosines_as_this_processs(
    population, service, settings
):
    # The service sends ids as one text and scores as byte dot products: the worker makes
    # the same (id, cosine) pairs of them as a search in this process, as UUIDs or as text.
    asked = [(t, floor) for t in QUERIES for floor in (-1.0, 0.999)]
    here = {a: client.nearest(a[0], 5, floor=a[1]) for a in asked}
    here_text = {a: client.nearest(a[0], 5, floor=a[1], ids_as_text=True) for a in asked}
    settings.SEMANTIC_SOCKET = service
    assert {a: client.nearest(a[0], 5, floor=a[1]) for a in asked} == here
    assert {a: client.nearest(a[0], 5, floor=a[1], ids_as_text=True) for a in asked} == here_text
    first = here[(QUERIES[0], -1.0)]
    assert len(first) == 5 and isinstance(first[0][0], uuid.UUID)
    assert here_text[(QUERIES[0], -1.0)] == [(str(pk), cosine) for pk, cosine in first]
    assert here[(QUERIES[0], 0.999)] == []  # none that near: an empty answer


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_the_service", [False, True])
def test_the_agents_to_search_among_may_be_sent_packed(
    population, service, settings, in_the_service
):
    """``among`` as ids, or as their 16 bytes one after the other (what a statement packs):
    the same search, in this process and in the service."""
    if in_the_service:
        settings.SEMANTIC_SOCKET = service
    among = [uuid.UUID(population[name]) for name in ("scribe", "pdf", "weather", "tables")]
    as_ids = client.nearest("turn speech into text", 3, among)
    packed = client.nearest("turn speech into text", 3, b"".join(pk.bytes for pk in among))
    assert packed == as_ids and len(as_ids) == 3
    assert as_ids[0][0] == uuid.UUID(population["scribe"])
    assert {pk for pk, _ in as_ids} <= set(among)
    # One of all the agents: its row's product alone (above, most rows: one product).
    one = [uuid.UUID(population["pdf"])]
    assert client.nearest("turn speech into text", 3, one[0].bytes) == client.nearest(
        "turn speech into text", 3, one
    )
    assert [pk for pk, _ in client.nearest("pdf tables", 3, one)] == one


@pytest.mark.django_db(transaction=True)
def test_without_the_service_hybrid_falls_back_to_keywords_and_semantic_is_a_503(
    anon, population, settings, tmp_path
):
    settings.SEMANTIC_SOCKET = str(tmp_path / "nobody-listens.sock")
    response = anon.get("/discover/agents", {"q": "Audio transcription", "mode": "hybrid"})
    assert response.status_code == 200
    assert [a["id"] for a in response.json()["results"]] == [population["scribe"]]
    response = anon.get("/discover/agents", {"q": "Audio transcription", "mode": "semantic"})
    assert response.status_code == 503
    assert response.json()["type"].endswith("semantic-unavailable")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_processes_give_the_same_order(anon, population, settings, tmp_path):
    """The service in a process of its own (as the Procfile runs it) and this one."""
    here = {q: order(anon, q, "hybrid") for q in QUERIES}
    path = str(tmp_path / "semantic.sock")
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
    }
    root = Path(__file__).resolve().parents[3]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "semantic_serve", "--socket", path],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            if os.path.exists(path):
                break
            time.sleep(0.1)
        settings.SEMANTIC_SOCKET = path
        assert {q: order(anon, q, "hybrid") for q in QUERIES} == here
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_a_new_agent_is_found_by_meaning_by_the_next_search(
    anon, population, add_agent, serving, settings
):
    # The watcher's own period is far away: only the search's own look can find the agent.
    server = serving(watch_seconds=3600)
    settings.SEMANTIC_SOCKET = server.server_address
    query = "poems and sonnets"
    before = order(anon, query, "semantic")
    poet = add_agent("Quill", "Verse and sonnets composed on request.", [{"name": "Compose"}])
    assert poet in order(anon, query, "semantic")
    assert poet not in before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_service_keeps_answering_when_its_database_connection_drops(
    anon, population, add_agent, serving, settings
):
    server = serving(watch_seconds=0.05)
    settings.SEMANTIC_SOCKET = server.server_address
    query = "turn speech into text"
    before = order(anon, query, "hybrid")
    assert population["scribe"] in before
    others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    with connection.cursor() as cursor:  # every other connection: the service's watcher's
        for _ in range(400):
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone()[0]:
                break
            time.sleep(0.05)
        cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")
        assert any(terminated for (terminated,) in cursor.fetchall())
    assert order(anon, query, "hybrid") == before
    dictaphone = add_agent("Dictaphone", "Voice notes as words.", [{"name": "Dictate"}])
    # The watcher reconnects on its next look and reads the new vector.
    for _ in range(400):
        if len(server.index) == len(population) + 1:
            break
        time.sleep(0.05)
    assert dictaphone in order(anon, "voice notes as words", "semantic")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_lean_lane_asks_the_service_while_it_reads_and_sees_an_agent_just_written(
    population, add_agent, serving, settings
):
    """The lane asks for the nearest agents before its keyword statement, searched in the
    vectors the service holds; when those are not of the statement's data generation (a
    write since the service last looked), it asks again for that generation's."""
    from tests.registry.discovery.conftest import lane_answer, view_answer

    server = serving(watch_seconds=3600)  # only a search's own ask makes the watcher look
    settings.SEMANTIC_SOCKET = server.server_address
    for query in [*QUERIES, "poems and sonnets"]:
        path = f"/discover/agents?q={query.replace(' ', '+')}"
        assert lane_answer(path) == (view_answer(path), False)
    poet = add_agent("Quill", "Verse and sonnets composed on request.", [{"name": "Compose"}])
    answer, asked_django = lane_answer("/discover/agents?q=poems+and+sonnets&limit=50")
    assert not asked_django and poet.encode() in answer[2]


@pytest.mark.parametrize(
    "bad",
    [{"among_packed": 5}, {"among_packed": "not base64!"}, {"generation": "7"}],
)
def test_a_malformed_search_is_refused_by_the_service(bad):
    """Refused before any search (the worker falls back as when the service is away)."""
    from registry.semantic.index import VectorIndex
    from registry.semantic.service import answer

    reply = answer(VectorIndex(), {"op": "nearest", "text": "rain", "k": 1, **bad})
    assert set(reply) == {"error"}


@pytest.fixture
def accepted(monkeypatch):
    """The connections every service started in the test accepted, counted."""
    from registry.semantic import service as service_module

    seen = []
    handler_make = service_module.socketserver.ThreadingUnixStreamServer.process_request

    def counted(self, request, address):
        seen.append(request)
        return handler_make(self, request, address)

    monkeypatch.setattr(
        service_module.socketserver.ThreadingUnixStreamServer, "process_request", counted
    )
    return seen


@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_one_connection_and_reopens_it_after_a_restart(
    population, serving, settings, accepted
):
    """A worker's requests go one after another on one kept connection; when the service
    restarts, the next request opens a new one and is answered, not failed."""
    server = serving()
    settings.SEMANTIC_SOCKET = server.server_address
    first = client.nearest("turn speech into text", 3)
    assert client.embed(["rain"]) and client.nearest("rain", 2)
    assert len(accepted) == 1
    server.shutdown()
    server.server_close()  # its kept connections end with it
    settings.SEMANTIC_SOCKET = serving().server_address  # (the same path)
    assert client.nearest("turn speech into text", 3) == first
    assert len(accepted) == 2


@pytest.mark.django_db(transaction=True)
def test_an_answer_left_unread_does_not_answer_the_next_request(
    population, service, settings, accepted, monkeypatch
):
    """A caller that raised between nearest_begin and result leaves its answer unread: the
    next request is sent on a new connection and gets its own answer. A forked process
    opens its own connection rather than share its parent's."""
    settings.SEMANTIC_SOCKET = service
    client.nearest_begin("turn speech into text", 3)  # never read
    rain = client.nearest("rain", 2)
    assert rain == client.nearest("rain", 2)
    assert rain != client.nearest("turn speech into text", 2)
    assert len(accepted) == 2
    parent = os.getpid()
    monkeypatch.setattr(client.os, "getpid", lambda: parent + 1)  # as in a forked child
    assert client.nearest("rain", 2) == rain
    assert len(accepted) == 3


@pytest.mark.parametrize(
    "answer",
    [
        {"hits": [["0b0e7a4c-59d4-4a1b-9c55-2f4f1f1d0c11", 0.5]], "generation": 3},  # older
        {"ids": "not-a-uuid", "dots": [100], "generation": 3},
        {"ids": "0b0e7a4c-59d4-4a1b-9c55-2f4f1f1d0c11", "dots": [], "generation": 3},
        {"ids": 7, "dots": [1], "generation": 3},
    ],
)
def test_a_malformed_answer_is_the_service_unavailable(answer, settings, monkeypatch):
    # A service of another version (mid-deploy) or a broken answer: the worker answers
    # without search by meaning (hybrid falls back to keywords) instead of failing.
    settings.SEMANTIC_SOCKET = "/nonexistent/semantic.sock"
    monkeypatch.setattr(
        client, "_Asked", lambda request: type("A", (), {"answer": lambda s: answer})()
    )
    with pytest.raises(client.SemanticUnavailable, match="malformed"):
        client.nearest("rain", 2)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_lean_lane_looks_up_no_nearest_agent_when_the_service_holds_its_generation(
    alice, population, serving, settings
):
    """A first page of words alone: the service's hits are all agents discovery finds, so
    the lane does not look them up; an agent retired since the service last looked is gone
    from the page as from the view's."""
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    from tests.registry.discovery.conftest import lane_answer, view_answer

    server = serving(watch_seconds=3600)  # only a search's own ask makes the watcher look
    settings.SEMANTIC_SOCKET = server.server_address
    lookup = '"agent_id" = ANY('

    def lane(words: str) -> bytes:
        path = f"/discover/agents?q={words.replace(' ', '+')}"
        with CaptureQueriesContext(db) as statements:
            answer, asked_django = lane_answer(path)
        assert not asked_django
        assert not [s["sql"] for s in statements if lookup in (s["sql"] or "")]
        assert answer == view_answer(path)
        return answer[2]

    assert population["scribe"].encode() in lane("turn speech into text")
    assert alice.delete(f"/agents/{population['scribe']}").status_code == 204
    assert population["scribe"].encode() not in lane("turn speech into text")
    assert population["tables"].encode() in lane("restaurant reservations")  # (the others stay)
