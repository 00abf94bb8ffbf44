"""The embedding service (manage.py semantic_serve): the web workers ask it over its Unix
socket, and every process answers a query in the same order."""

import os
import subprocess
import sys
import threading
import time
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
def service(tmp_path):
    path = str(tmp_path / "semantic.sock")
    server = server_make(path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield path
    server.shutdown()
    server.server_close()


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
