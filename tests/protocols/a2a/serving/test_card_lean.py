"""GET /a2a/agents/<id> on the lean lane: the same answer as the Django view (card_serve),
header for header, and everything but a stored card left to that view."""

import uuid

import pytest
from django.db import DatabaseError

from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


@pytest.fixture
def card_path(alice, make_card) -> str:
    agent_id = alice.post("/a2a/agents", {"card": make_card()}, format="json").json()["id"]
    return f"/a2a/agents/{agent_id}"


def test_the_card_on_the_lane_equals_the_views_answer(lane, card_path, anon):
    app, django = lane
    status, headers, body = call(app, "GET", card_path, HTTP_X_REQUEST_ID="same-id")
    assert django.paths == []
    expected = anon.get(card_path, HTTP_X_REQUEST_ID="same-id")  # echoed by both
    assert (status, body) == (expected.status_code, expected.content)
    assert headers == dict(expected.headers.items())
    assert headers["ETag"].startswith('"') and headers["Cache-Control"] == "public, max-age=60"


def test_other_spellings_of_the_id_get_the_same_card(lane, card_path, anon):
    app, django = lane
    agent_id = card_path.rsplit("/", 1)[1]
    expected = anon.get(card_path)
    for spelling in (agent_id.upper(), agent_id.replace("-", ""), f"{{{agent_id}}}"):
        status, headers, body = call(app, "GET", f"/a2a/agents/{spelling}")
        assert (status, body, headers["ETag"]) == (200, expected.content, expected["ETag"])
    assert django.paths == []


def test_the_card_read_is_one_query(lane, card_path, django_assert_num_queries):
    app, _ = lane
    with django_assert_num_queries(1):
        assert call(app, "GET", card_path)[0] == 200


def test_a_pinned_version_read_is_one_query_as_the_latest_is(
    lane, card_path, django_assert_num_queries
):
    app, django = lane
    with django_assert_num_queries(1):
        status, headers, _ = call(app, "GET", f"{card_path}?version=1")
    assert (status, django.paths) == (200, [])
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable"


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("version=1", 200),
        ("version=01", 200),
        ("version=%31", 200),
        ("other=x&version=1", 200),
        ("version=2&version=1", 200),
        ("version=1&version=2", 404),
        ("version=0", 404),
        ("version=2", 404),
        ("version=99999999999999999999", 404),
    ],
)
def test_every_spelling_of_a_pinned_version_gets_the_views_answer(
    lane, card_path, anon, query, status
):
    app, _ = lane
    path = f"{card_path}?{query}"
    got, headers, body = call(app, "GET", path, HTTP_X_REQUEST_ID="same-id")
    expected = anon.get(path, HTTP_X_REQUEST_ID="same-id")  # a problem names it
    assert (got, body) == (expected.status_code, expected.content)
    assert got == status
    if status == 200:
        assert headers["ETag"] == expected["ETag"]


def test_conditional_gets_answer_304_as_the_view_does(lane, card_path, anon):
    app, django = lane
    expected = anon.get(card_path)
    etag, modified = expected["ETag"], expected["Last-Modified"]
    for meta in ({"HTTP_IF_NONE_MATCH": etag}, {"HTTP_IF_MODIFIED_SINCE": modified}):
        meta["HTTP_X_REQUEST_ID"] = "same-id"
        status, headers, body = call(app, "GET", card_path, **meta)
        view = anon.get(card_path, **meta)
        assert (status, body) == (view.status_code, view.content) == (304, b"")
        # Django also sends "Content-Length: 0", which a 304 must not (RFC 9110 8.6).
        assert headers == {k: v for k, v in view.headers.items() if k != "Content-Length"}
    # Another version, or a date before the card's: the whole card.
    assert call(app, "GET", card_path, HTTP_IF_NONE_MATCH='"stale"')[2] == expected.content
    old = "Mon, 01 Jan 2001 00:00:00 GMT"
    assert call(app, "GET", card_path, HTTP_IF_MODIFIED_SINCE=old)[2] == expected.content
    assert django.paths == []


def test_head_answers_the_headers_without_the_card(lane, card_path, anon):
    app, _ = lane
    status, headers, body = call(app, "HEAD", card_path)
    assert (status, body) == (200, b"")
    assert headers["Content-Length"] == str(len(anon.get(card_path).content))


@pytest.mark.parametrize(
    "path",
    ["/a2a/agents/not-a-uuid", "/a2a/agents/7d1b9e52-3c4a-4f6e-9a0b-2c8d5e1f4a63", "/a2a/agents/"],
)
def test_what_is_not_a_stored_card_goes_to_the_view(db, lane, path):
    app, django = lane
    status, headers, _ = call(app, "GET", path)
    assert status == 404 and headers["Content-Type"] == "application/problem+json"
    assert django.paths == [path]


def test_an_agent_without_a_card_gets_the_views_problem(lane, alice, native_payload):
    payload = native_payload()
    payload["endpoints"] = [
        e for e in payload.get("endpoints", []) if e.get("protocol") not in ("A2A", None)
    ]
    agent_id = alice.post("/agents", payload, format="json").json()["id"]
    app, django = lane
    status, _, body = call(app, "GET", f"/a2a/agents/{agent_id}")
    assert status == 404 and b"no-a2a-endpoint" in body
    assert django.paths == [f"/a2a/agents/{agent_id}"]


def test_the_read_limit_counts_each_request_once(lane, card_path, settings):
    settings.RATE_LIMIT_READ = "3/day"
    app, django = lane
    missing = f"/a2a/agents/{uuid.uuid4()}"
    assert call(app, "GET", missing)[0] == 404  # counted on the lane, not again in the view
    assert call(app, "GET", card_path)[0] == 200
    assert call(app, "GET", card_path)[0] == 200
    status, headers, body = call(app, "GET", card_path)
    assert status == 429 and int(headers["Retry-After"]) >= 1
    assert b"throttled" in body
    assert django.paths == [missing, card_path]  # refusals come from the view


def test_a_database_error_hands_the_request_to_the_view(lane, card_path, anon, monkeypatch):
    import protocols.a2a.serving.cards

    real = protocols.a2a.serving.cards.card_read_served
    calls = []

    def broken_once(pk):
        calls.append(pk)
        if len(calls) == 1:
            raise DatabaseError("connection lost")
        return real(pk)

    monkeypatch.setattr(protocols.a2a.serving.cards, "card_read_served", broken_once)
    app, django = lane
    status, _, body = call(app, "GET", card_path)
    assert (status, body) == (200, anon.get(card_path).content)
    assert django.paths == [card_path] and len(calls) >= 2


def test_with_ssl_redirect_a_plain_http_card_fetch_is_redirected(card_path, settings):
    settings.SECURE_SSL_REDIRECT = True
    recorder = Recorder()
    status, headers, _ = call(LeanApplication(recorder), "GET", card_path)
    assert status == 301 and headers["Location"] == f"https://testserver{card_path}"
    assert recorder.paths == [card_path]
