"""Hostile request bodies: refused with a clear problem, never stored, never a 500."""

import base64
import json

import pytest

from registry.agents.models import Agent

pytestmark = pytest.mark.django_db


def post_raw(client, path, body: bytes, content_type="application/json"):
    return client.generic("POST", path, body, content_type=content_type)


@pytest.mark.parametrize(
    "path", ["/agents", pytest.param("/a2a/agents", marks=pytest.mark.apps("a2a"))]
)
def test_bodies_over_the_cap_are_413(settings, alice, path):
    settings.REGISTRY_MAX_BODY_BYTES = 2048
    body = json.dumps({"name": "x" * 4096}).encode()
    response = post_raw(alice, path, body)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert "2048 bytes" in response.json()["detail"]
    assert Agent.objects.count() == 0


@pytest.mark.apps("a2a")
def test_the_default_cap_is_one_mebibyte(alice, make_card):
    card = make_card(description="d" * (1024 * 1024))
    response = post_raw(alice, "/a2a/agents", json.dumps({"card": card}).encode())
    assert response.status_code == 413


@pytest.mark.apps("a2a")
def test_deeply_nested_json_is_400(alice):
    body = b'{"card": ' + b'{"a": ' * 200 + b"1" + b"}" * 200 + b"}"
    response = post_raw(alice, "/a2a/agents", body)
    assert response.status_code == 400
    assert "nested deeper than 64" in response.json()["detail"]


def test_pathologically_deep_json_is_400_not_a_recursion_crash(alice):
    body = b"[" * 100_000 + b"]" * 100_000
    response = post_raw(alice, "/agents", body)
    assert response.status_code in (400, 413)
    assert response["Content-Type"] == "application/problem+json"


def test_invalid_utf8_is_400(alice):
    response = post_raw(alice, "/agents", b'{"name": "caf\xe9"}')
    assert response.status_code == 400
    assert "UTF-8" in response.json()["detail"]


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"42", b"null"])
def test_non_object_bodies_are_400(alice, body):
    response = post_raw(alice, "/agents", body)
    assert response.status_code == 400
    assert "must be a JSON object" in response.json()["detail"]


@pytest.mark.parametrize("body", [b'{"name": NaN}', b'{"name": 1e999}', b'{"a": Infinity}'])
def test_non_finite_numbers_are_400(alice, body):
    assert post_raw(alice, "/agents", body).status_code == 400


@pytest.mark.apps("a2a")
def test_an_empty_body_is_400(alice):
    response = post_raw(alice, "/a2a/agents", b"")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "card"


def test_duplicate_keys_anywhere_are_400_with_paths(alice):
    body = b'{"name": "a", "capabilities": [{"name": "x", "tags": [], "name": "y"}]}'
    response = post_raw(alice, "/agents", body)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "capabilities[0].name", "message": "duplicate key"}
    ]
    assert Agent.objects.count() == 0


def with_metadata(metadata: bytes) -> bytes:
    return (
        b'{"name": "a", "endpoints": [{"name": "q", "transport": "Amqp", "protocol": "MCP",'
        b' "address": "jobs", "protocolMetadata": ' + metadata + b"}]}"
    )


@pytest.mark.parametrize(
    ("metadata", "path", "message"),
    [
        (rb'{"note": "x\u0000"}', "note", "contains a NUL character (U+0000)"),
        (rb'{"k\u0000": 1}', "k\x00", "key contains a NUL character (U+0000)"),
        (rb'{"note": "\ud800"}', "note", "contains a lone surrogate (U+D800 to U+DFFF)"),
    ],
)
def test_text_that_cannot_be_stored_is_400_with_its_path(alice, metadata, path, message):
    # PostgreSQL refuses NUL in text and jsonb; no database can encode a lone surrogate.
    response = post_raw(alice, "/agents", with_metadata(metadata))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == [
        {"path": f"endpoints[0].protocolMetadata.{path}", "message": message}
    ]
    assert Agent.objects.count() == 0


@pytest.mark.apps("a2a")
def test_a_card_with_a_nul_character_is_400_not_a_database_error(alice, make_card):
    body = json.dumps({"card": make_card(description="Forecasts.\u0000")}).encode()
    response = post_raw(alice, "/a2a/agents", body)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "card.description"
    assert Agent.objects.count() == 0


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


@pytest.mark.parametrize(
    ("transport", "address"),
    [
        ("Amqp", "amqp://user:secret@broker.example/vhost"),
        ("Http", "https://user:secret@agent.example/a2a"),
        ("Http", "https://token@agent.example/a2a"),
    ],
)
def test_addresses_with_credentials_are_refused_they_would_be_served(
    alice, native_payload, transport, address
):
    payload = native_payload()
    payload["endpoints"][0].update(transport=transport, address=address, protocol="Generic")

    response = alice.post("/agents", payload, format="json")

    assert problem_fields(response) == ["endpoints[0].address"]
    assert "credentials" in response.json()["errors"][0]["message"]
    assert not Agent.objects.exists()
