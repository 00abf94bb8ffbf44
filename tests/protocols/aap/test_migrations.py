"""Migration aap 0003: the "aap" fact becomes "declares AAP"; compliance moves to
"aapCompliant"."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("aap", "0002_facts_replace_skills")]
AFTER = [("aap", "0003_aap_compliant_fact")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("migrations_restored")
def test_0003_rewrites_the_stored_aap_facts():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Agent, AgentFacet = old.get_model("registry", "Agent"), old.get_model("registry", "AgentFacet")
    AAPStatus = old.get_model("aap", "AAPStatus")
    rows = {}
    for name, dealer, compliant in [
        ("good", True, True),
        ("bad", True, False),
        ("other", False, False),
    ]:
        agent = Agent.objects.create(name=name, owner="o")
        AAPStatus.objects.create(
            agent=agent, is_dealer_agent=dealer, compliant=compliant, checked_at=timezone.now()
        )
        if dealer:
            AgentFacet.objects.create(agent=agent, kind="aap", value=str(compliant).lower())
        rows[name] = agent.pk

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    facts = new.get_model("registry", "AgentFacet").objects

    def of(name: str) -> set[tuple[str, str]]:
        return set(facts.filter(agent_id=rows[name]).values_list("kind", "value"))

    assert of("good") == {("aap", "true"), ("aapCompliant", "true")}
    assert of("bad") == {("aap", "true"), ("aapCompliant", "false")}
    assert of("other") == set()
