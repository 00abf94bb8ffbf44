"""A version diff is computed once and cached (versions never change), immutable for
HTTP caches, and capped at VERSION_DIFF_MAX_BYTES (security finding 11)."""

import json

import pytest

from protocols.a2a.versions import api as versions_api

pytestmark = pytest.mark.django_db


def _skills(count: int, word: str) -> list[dict]:
    return [
        {"id": f"s{i}", "name": f"Skill {i} {word}", "description": f"{word} " * 40, "tags": [word]}
        for i in range(count)
    ]


def _two_versions(client, make_card, count: int) -> str:
    card = make_card(skills=_skills(count, "before"))
    agent_id = client.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    new = {**card, "version": "2.2.0", "skills": _skills(count, "after")}
    assert client.put(f"/a2a/agents/{agent_id}", {"card": new}, format="json").status_code == 200
    return agent_id


def test_a_second_diff_request_is_not_computed_again(alice, anon, make_card, monkeypatch):
    agent_id = _two_versions(alice, make_card, 3)
    calls = []
    real = versions_api.card_patch
    monkeypatch.setattr(versions_api, "card_patch", lambda *a: calls.append(1) or real(*a))
    first = anon.get(f"/agents/{agent_id}/versions/1/diff/2")
    second = anon.get(f"/agents/{agent_id}/versions/1/diff/2")
    assert first.status_code == second.status_code == 200
    assert len(calls) == 1
    assert first.content == second.content
    assert json.loads(first.content)["patch"] and json.loads(first.content)["truncated"] is False
    assert first["Cache-Control"] == "public, max-age=31536000, immutable"
    assert first["ETag"] == second["ETag"]
    again = anon.get(f"/agents/{agent_id}/versions/1/diff/2", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and len(calls) == 1


def test_an_oversized_diff_is_capped(alice, anon, make_card, settings):
    settings.VERSION_DIFF_MAX_BYTES = 4096
    agent_id = _two_versions(alice, make_card, 40)
    answer = anon.get(f"/agents/{agent_id}/versions/1/diff/2")
    assert answer.status_code == 200
    assert len(answer.content) <= 4096
    body = json.loads(answer.content)
    assert body["truncated"] is True and body["patch"] is None and body["maxBytes"] == 4096
    assert body["from"] == 1 and body["to"] == 2 and "breaking" in body
