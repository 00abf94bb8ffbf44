"""Migration a2a 0006: every card stored before versions existed becomes its agent's
version 1, byte for byte."""

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("a2a", "0005_agent_tasks")]
AFTER = [("a2a", "0007_card_versions")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("migrations_restored")
def test_0006_makes_each_stored_card_version_one():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Agent, CardDocument = old.get_model("registry", "Agent"), old.get_model("a2a", "CardDocument")
    body = b'{"name": "Old", "version": "3.1.4"}'
    agent = Agent.objects.create(name="Old", owner="o")
    stored = timezone.now()
    CardDocument.objects.create(
        agent=agent,
        body=body,
        sha256=hashlib.sha256(body).hexdigest(),
        origin="submitted",
        spec_version="1.0",
    )
    Agent.objects.create(name="No card", owner="o")

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    versions = list(new.get_model("a2a", "CardVersion").objects.all())
    assert len(versions) == 1
    version = versions[0]
    assert (version.agent_id, version.seq, version.card_version) == (agent.pk, 1, "3.1.4")
    assert bytes(version.body) == body and version.sha256 == hashlib.sha256(body).hexdigest()
    assert version.change == "migrate" and version.created_at >= stored.replace(microsecond=0)
