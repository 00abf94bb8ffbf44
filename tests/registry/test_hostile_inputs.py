"""Hostile inputs that once were 500s: each is a 400 naming what is wrong, and stores
nothing (security review, item 5)."""

import base64
import json

import pytest

from registry.models import Agent

pytestmark = pytest.mark.django_db


def cursor(payload) -> str:
    raw = json.dumps(payload).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def problem_fields(response) -> list[str]:
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    return [p["path"] for p in response.json().get("errors", [])]


@pytest.mark.parametrize(
    ("sort", "payload"),
    [
        ("recent", ["recent", "2026-01-01T00:00:00Z", ["not", "an", "id"]]),
        ("recent", ["recent", "2026-01-01T00:00:00Z", {"an": "object"}]),
        ("recent", ["recent", "9999-12-31T23:59:59-14:00", "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"]),
        ("recent", ["recent", "0001-01-01T00:00:00+14:00", "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"]),
        ("name", ["name", "we\u0000ather", "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"]),
        (
            "relevance",
            ["relevance", [2, "9999-12-31T23:59:59-14:00"], "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"],
        ),
        ("relevance", ["relevance", float("nan"), "7d0c2f52-5b7e-4a40-9d3c-5b0e7ad0b8b1"]),
    ],
)
def test_tampered_cursors_are_400s_naming_the_cursor(anon, alice, native_payload, sort, payload):
    alice.post("/agents", native_payload(), format="json")
    params = {"sort": sort, "cursor": cursor(payload)}
    if sort == "relevance":
        params["q"] = "summarizer"

    assert problem_fields(anon.get("/discover/agents", params)) == ["cursor"]


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_change_feed_start_out_of_range_is_a_400(anon, since):
    assert problem_fields(anon.get("/discover/agents", {"updated_since": since})) == [
        "updated_since"
    ]


def test_a_description_longer_than_a_card_needs_is_a_400(alice, native_payload):
    payload = native_payload(description="word " * 200_000)

    assert problem_fields(alice.post("/agents", payload, format="json")) == ["description"]
    assert not Agent.objects.exists()


@pytest.mark.postgres
def test_text_beyond_what_a_tsvector_holds_is_indexed_in_part_not_a_500(alice, anon):
    # ~900,000 characters of distinct words: more than PostgreSQL's tsvector holds (1 MB).
    words = iter(f"w{n:06d}x" for n in range(1_000_000))
    capabilities = [
        {"name": f"cap{i}", "description": " ".join(next(words) for _ in range(2_000))}
        for i in range(45)
    ]
    payload = {"name": "Verbose", "description": "findme", "capabilities": capabilities}

    response = alice.post("/agents", payload, format="json")

    assert response.status_code == 201, response.content[:500]
    found = anon.get("/discover/agents", {"q": "findme"}).json()["results"]
    assert [a["name"] for a in found] == ["Verbose"]
