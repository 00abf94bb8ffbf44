"""Replacing a card costs a bounded number of statements whatever its number of skills,
and its dry run writes nothing (security finding 5: a large card's replace made one
UPDATE per skill, each refreshing the agent's filter keys over all of its skills)."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|COPY|MERGE|TRUNCATE)\b", re.IGNORECASE)


def _skills(count: int, word: str) -> list[dict]:
    return [
        {
            "id": f"skill-{i}",
            "name": f"Skill {i} {word}",
            "description": f"Does thing {i}, {word}.",
            "tags": [f"tag{i}", word],
            "examples": [f"Do {i}"],
        }
        for i in range(count)
    ]


def _replace_statements(client, make_card, count: int, **params) -> list[str]:
    interfaces = [
        {
            "url": f"https://agent{count}.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    card = make_card(supportedInterfaces=interfaces, skills=_skills(count, "before"))
    answer = client.post("/a2a/agents", {"card": card}, format="json")
    assert answer.status_code == 201, answer.content
    agent_id = answer.json()["id"]
    # Every skill changes, a new one comes and an old one goes.
    skills = _skills(count + 1, "after")[1:]
    query = "?dryRun=true" if params.get("dry_run") else ""
    with CaptureQueriesContext(connection) as captured:
        answer = client.put(
            f"/a2a/agents/{agent_id}{query}",
            {"card": {**card, "version": "2.2.0", "skills": skills}},
            format="json",
        )
    assert answer.status_code == 200, answer.content
    return [q["sql"] for q in captured.captured_queries]


def test_a_replace_costs_the_same_statements_for_5_skills_as_for_60(alice, make_card):
    small = _replace_statements(alice, make_card, 5)
    large = _replace_statements(alice, make_card, 60)
    assert len(large) == len(small), (len(small), len(large))


def test_a_dry_run_issues_no_write_statement(alice, make_card):
    statements = _replace_statements(alice, make_card, 60, dry_run=True)
    writes = [sql for sql in statements if WRITE.match(sql)]
    assert writes == []


def test_a_dry_runs_answer_is_the_versions_the_replace_stores(alice, make_card):
    card = make_card(skills=_skills(3, "before"))
    agent_id = alice.post("/a2a/agents", {"card": card}, format="json").json()["id"]
    new = {**card, "version": "3.0.0", "skills": _skills(4, "after")[1:]}
    url = f"/a2a/agents/{agent_id}"
    preview = alice.put(f"{url}?dryRun=true", {"card": new}, format="json").json()
    assert alice.get(f"/agents/{agent_id}/versions").json()["items"][0]["seq"] == 1
    assert alice.put(url, {"card": new}, format="json").status_code == 200
    stored = alice.get(f"/agents/{agent_id}/versions").json()["items"][0]
    assert preview["changed"] is True and preview["dryRun"] is True
    for name in ("seq", "version", "sha256", "breaking", "summary"):
        assert preview[name] == stored[name], name
    again = alice.put(f"{url}?dryRun=true", {"card": new}, format="json").json()
    assert again == {**preview, "changed": False, "breaking": False, "summary": None}
