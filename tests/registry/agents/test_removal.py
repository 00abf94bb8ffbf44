"""Removing an agent, deleted (the admin, the apps) or retired (DELETE over the API): both
ask the same question, and a protocol app that refuses keeps the agent as it was."""

import pytest
from django.dispatch import receiver

from registry.agents.lifecycle import agent_retire
from registry.agents.models import Agent
from registry.agents.removal import agent_delete
from registry.http.problems import ProblemError
from registry.signals import agent_deleting

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(alice, native_payload) -> Agent:
    answer = alice.post("/agents", native_payload(name="Kept Agent"), format="json")
    assert answer.status_code == 201
    return Agent.objects.get(pk=answer.json()["id"])


@pytest.fixture
def asked():
    """A protocol app that refuses every removal by a non-admin, recording each question."""
    questions = []

    @receiver(agent_deleting, weak=False)
    def refuse(sender, agent, admin, **kwargs):
        questions.append((agent.pk, admin))
        if not admin:
            raise ProblemError(403, "forbidden", "This app keeps the agent.")

    yield questions
    agent_deleting.disconnect(refuse)


def test_deleting_and_retiring_ask_the_same_question_and_a_refusal_keeps_the_agent(agent, asked):
    with pytest.raises(ProblemError):
        agent_delete(agent=agent, admin=False)
    with pytest.raises(ProblemError):
        agent_retire(agent=agent, admin=False)
    assert asked == [(agent.pk, False), (agent.pk, False)]
    agent.refresh_from_db()
    assert agent.status == Agent.Status.ACTIVE


def test_an_admin_removal_is_asked_once_and_goes_through(alice, native_payload, agent, asked):
    other = Agent.objects.get(
        pk=alice.post("/agents", native_payload(), format="json").json()["id"]
    )
    agent_retire(agent=agent, admin=True)
    assert Agent.objects.get(pk=agent.pk).status == Agent.Status.RETIRED
    agent_delete(agent=other, admin=True)
    assert not Agent.objects.filter(pk=other.pk).exists()
    assert asked == [(agent.pk, True), (other.pk, True)]


def test_delete_over_the_api_is_refused_by_the_app_and_changes_nothing(alice, agent, asked):
    answer = alice.delete(f"/agents/{agent.pk}")
    assert answer.status_code == 403
    assert answer["Content-Type"].startswith("application/problem+json")
    assert alice.get(f"/agents/{agent.pk}").json()["status"] == "active"


def test_an_agents_tags_go_with_its_capabilities_and_with_it(alice, native_payload):
    """The tag index's key to its agent is checked by no constraint (migration 0025):
    replacing an agent's capabilities and deleting the agent leave no tag behind all the
    same."""
    from registry.agents.models import CapabilityTag

    payload = native_payload(
        name="Tagged", capabilities=[{"name": "Tides", "tags": ["sea", "moon"]}]
    )
    answer = alice.post("/agents", payload, format="json")
    pk = answer.json()["id"]
    assert set(CapabilityTag.objects.filter(agent_id=pk).values_list("value", flat=True)) == {
        "sea",
        "moon",
    }
    replaced = native_payload(name="Tagged", capabilities=[{"name": "Ports", "tags": ["harbour"]}])
    assert alice.put(f"/agents/{pk}", replaced, format="json").status_code == 200
    assert list(CapabilityTag.objects.values_list("value", flat=True)) == ["harbour"]
    agent_delete(agent=Agent.objects.get(pk=pk), admin=True)
    assert not CapabilityTag.objects.exists()
