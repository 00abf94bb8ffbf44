"""/v1/resolve searches as discovery does: ``mode`` hybrid (the default), semantic or
keyword, on the demo's entities (``manage.py load_demo``), with the embedder in process."""

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
HUNGRY = "somewhere to eat"


@pytest.fixture
def demo():
    call_command("load_demo", stdout=io.StringIO())


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [r["entity"]["name"] for r in response.json()["results"]]


def test_resolve_finds_a_business_by_meaning_by_default(anon, demo):
    found = anon.get("/v1/resolve", {"query": HUNGRY}).json()["results"]
    assert found[0]["entity"]["name"] == "Demo Trattoria"
    assert 0 < found[0]["confidence"] <= 1
    assert names(anon.get("/v1/resolve", {"query": HUNGRY, "mode": "hybrid"}))[0] == (
        "Demo Trattoria"
    )
    assert names(anon.get("/v1/resolve", {"query": HUNGRY, "mode": "semantic"}))[0] == (
        "Demo Trattoria"
    )
    assert names(anon.get("/v1/resolve", {"query": HUNGRY, "mode": "keyword"})) == []


def test_resolve_by_meaning_keeps_to_the_filters(anon, demo):
    for mode in ("semantic", "hybrid"):
        query = {"query": HUNGRY, "mode": mode}
        assert names(anon.get("/v1/resolve", {**query, "min_verification": "2"})) == []
        lyon = names(anon.get("/v1/resolve", {**query, "location": "Lyon"}))
        assert "Demo Trattoria" not in lyon
        assert set(lyon) <= {"Demo Bistro Lyon"}


def test_resolve_keeps_the_entities_with_the_words_first(anon, demo):
    found = anon.get("/v1/resolve", {"query": "trattoria"}).json()["results"]
    assert found[0]["entity"]["name"] == "Demo Trattoria"
    assert found[0]["confidence"] == 1.0


@pytest.mark.parametrize("mode", ["bogus", "KEYWORD", "semantic,keyword"])
def test_a_bad_mode_is_a_400_listing_the_modes(anon, mode):
    response = anon.get("/v1/resolve", {"query": HUNGRY, "mode": mode})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    error = response.json()["errors"][0]
    assert error["path"] == "mode"
    assert "hybrid, semantic, keyword" in error["message"]


def test_without_the_embedding_service_hybrid_resolves_by_words(anon, demo, settings, tmp_path):
    settings.SEMANTIC_SOCKET = str(tmp_path / "nobody-listens.sock")
    assert names(anon.get("/v1/resolve", {"query": "trattoria"})) == ["Demo Trattoria"]
    response = anon.get("/v1/resolve", {"query": HUNGRY, "mode": "semantic"})
    assert response.status_code == 503
    assert response.json()["type"].endswith("semantic-unavailable")
