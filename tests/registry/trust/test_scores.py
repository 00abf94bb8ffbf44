"""Trust scores: the formula on hand-computed agents, kept at write time, after probes and by
the daily job, shown in the agent JSON, and minTrust, sort=trust and the band facet."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from registry.agents.models import Agent, Endpoint
from registry.liveness.models import ProbeResult
from registry.signals import agents_written_send
from registry.trust.scoring import band_of, score_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def weights(settings):
    """The core's signals alone, so that the scores are the same with or without the apps."""
    settings.TRUST_WEIGHTS = {"age": 1, "uptime": 2, "conformance": 1}
    settings.TRUST_AGE_FULL_DAYS = 90
    settings.TRUST_HISTORY_DAYS = 30
    return settings


def register(client, native_payload, name: str) -> str:
    response = client.post("/agents", native_payload(name=name), format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def rewritten(*ids) -> None:
    """What a write sends once the rows changed: scores, then listings, follow."""
    with transaction.atomic():
        agents_written_send(ids)


def aged(agent_id: str, days: int) -> None:
    Agent.objects.filter(pk=agent_id).update(created_at=timezone.now() - timedelta(days=days))


def probed(agent_id: str, outcomes: list[tuple[bool, str]]) -> None:
    """Probe history for the agent's endpoint, oldest first; the last is the endpoint's."""
    endpoint = Endpoint.objects.get(agent_id=agent_id)
    now = timezone.now()
    ProbeResult.objects.bulk_create(
        ProbeResult(
            endpoint=endpoint,
            agent_id=agent_id,
            at=now - timedelta(hours=len(outcomes) - index),
            ok=ok,
            category=category,
        )
        for index, (ok, category) in enumerate(outcomes)
    )
    ok, category = outcomes[-1]
    Endpoint.objects.filter(pk=endpoint.pk).update(
        last_probe_at=now, last_probe_ok=ok, last_probe_category=category
    )


@pytest.mark.database_independent
def test_the_score_is_the_weighted_mean_of_the_values_the_agent_has_rounded_half_up():
    signals = {
        "age": {"value": 0.5, "weight": 1},
        "uptime": {"value": 0.75, "weight": 2},
        "conformance": {"value": 0.75, "weight": 1},
        # Says nothing of this agent (an entity's level for an agent that is no entity).
        "entityLevel": {"value": None, "weight": 10},
        "tls": {"value": 1.0, "weight": 0},
    }
    # (1 * 0.5 + 2 * 0.75 + 1 * 0.75) / 4 = 0.6875
    assert score_of(signals) == 69
    assert score_of({"age": {"value": 0.125, "weight": 1}}) == 13  # 12.5 rounds up
    assert score_of({}) == 0
    assert [band_of(s) for s in (100, 75, 74, 50, 49, 25, 24, 0)] == [
        "75-100",
        "75-100",
        "50-74",
        "50-74",
        "25-49",
        "25-49",
        "0-24",
        "0-24",
    ]


def test_a_hand_computed_agent_shows_its_score_and_signals_in_its_json_and_listing(
    weights, alice, anon, native_payload
):
    agent_id = register(alice, native_payload, "Measured")
    fresh = anon.get(f"/agents/{agent_id}").json()["trust"]
    assert fresh["score"] == 0  # new, never probed
    assert set(fresh["signals"]) >= {"age", "uptime", "conformance"}
    assert fresh["signals"]["uptime"]["weight"] == 2

    aged(agent_id, 45)  # 45 of 90 days: 0.5
    # Four probes, three up, two answering their protocol; the last one did.
    probed(agent_id, [(True, "ok"), (False, "timeout"), (True, "not_a2a"), (True, "ok")])
    rewritten(agent_id)

    trust = anon.get(f"/agents/{agent_id}").json()["trust"]
    # age 0.5 * 1, uptime 0.75 * 2, conformance (1 + 2/4) / 2 = 0.75 * 1: 2.75 / 4
    assert trust["score"] == 69
    assert trust["signals"]["age"] == {"value": 0.5, "weight": 1, "days": 45}
    assert trust["signals"]["uptime"] == {"value": 0.75, "weight": 2, "share": 0.75, "probes": 4}
    assert trust["signals"]["conformance"]["value"] == 0.75
    assert trust["signals"]["conformance"]["last"] is True
    assert trust["changedAt"] is not None
    listed = anon.get("/discover/agents").json()["results"]
    assert [item["trust"]["score"] for item in listed] == [69]


def test_the_daily_job_moves_scores_that_time_alone_changed(
    weights, alice, anon, native_payload, capsys
):
    agent_id = register(alice, native_payload, "Ageing")
    settings_days = 90
    with transaction.atomic():
        # The row ages without a write (as time does): the stored score stays until the job.
        Agent.objects.filter(pk=agent_id).update(
            created_at=timezone.now() - timedelta(days=settings_days)
        )
    call_command("trust_recompute")
    assert "Measured the trust of 1 agents; 1 changed." in capsys.readouterr().out
    # age in full (1 * 1) of the weights the agent has: 1 + 2 + 1
    assert anon.get(f"/agents/{agent_id}").json()["trust"]["score"] == 25
    listed = anon.get("/discover/agents").json()["results"][0]
    assert listed["trust"]["score"] == 25
    assert listed["createdAt"] == anon.get(f"/agents/{agent_id}").json()["createdAt"]

    call_command("trust_recompute")
    assert "1 agents; 0 changed." in capsys.readouterr().out


@pytest.fixture
def three(weights, alice, native_payload):
    """Three agents scored 25, 13 and 0 by their age alone."""
    ids = {}
    for name, days in (("Old", 90), ("Middle", 45), ("New", 0)):
        ids[name] = register(alice, native_payload, name)
        aged(ids[name], days)
    rewritten(*ids.values())
    return ids


def test_min_trust_keeps_the_agents_at_or_above_it_on_every_sort(three, anon):
    found = anon.get("/discover/agents?minTrust=13&sort=name").json()
    assert [item["name"] for item in found["results"]] == ["Middle", "Old"]
    assert anon.get("/discover/agents?minTrust=26").json()["results"] == []
    assert len(anon.get("/discover/agents?minTrust=0").json()["results"]) == 3


def test_sort_by_trust_pages_best_first_by_cursor(three, anon):
    first = anon.get("/discover/agents?sort=trust&limit=2").json()
    assert [item["name"] for item in first["results"]] == ["Old", "Middle"]
    assert first["sort"] == "trust"
    rest = anon.get(first["next"]).json()
    assert [item["name"] for item in rest["results"]] == ["New"]
    assert rest["next"] is None


def test_the_score_band_facet_counts_the_agents_of_each_band(three, anon):
    facets = anon.get("/discover/agents?facets=trustBand").json()["facets"]
    counts = {entry["value"]: entry["count"] for entry in facets["trustBand"]}
    assert counts == {"25-49": 1, "0-24": 2}
    banded = anon.get("/discover/agents?trustBand=25-49").json()["results"]
    assert [item["name"] for item in banded] == ["Old"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("minTrust=101", "minTrust"),
        ("minTrust=-1", "minTrust"),
        ("minTrust=high", "minTrust"),
        ("sort=best", "sort"),
    ],
)
def test_a_bad_trust_parameter_is_a_problem_naming_it(anon, db, query, field):
    response = anon.get(f"/discover/agents?{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert field in [error["path"] for error in response.json()["errors"]]


def test_a_forged_trust_cursor_is_a_problem(three, anon):
    response = anon.get("/discover/agents?sort=trust&cursor=WyJ0cnVzdCIsInRvcCIsIngiXQ")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "cursor"


@pytest.mark.database_independent
def test_the_documented_example_computes_to_its_score():
    import json
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "reference" / "trust.md"
    example = re.search(r"jq \.trust\n(\{.*?\n\})\n", page.read_text(), re.S).group(1)
    trust = json.loads(example)
    assert score_of(trust["signals"]) == trust["score"] == 72
    assert band_of(trust["score"]) == "50-74"
