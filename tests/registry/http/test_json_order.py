"""JSON objects in the order the database keeps them: what a bulk write builds from its own
instances is then what a read of the same rows would build."""

import pytest

from registry.agents.models import Agent, Endpoint
from registry.http.jsonutil import json_stored_order

METADATA = {
    "protocolVersion": "1.0",
    "provider": {"url": "https://a.example", "organization": "A"},
    "ab": [{"zz": 1, "é": 2, "b": 3}],
    "a": None,
}


def test_members_go_shorter_names_first_then_by_their_bytes_at_every_depth():
    ordered = json_stored_order(METADATA)
    assert list(ordered) == ["a", "ab", "provider", "protocolVersion"]
    assert list(ordered["provider"]) == ["url", "organization"]
    assert list(ordered["ab"][0]) == ["b", "zz", "é"]  # "é" is two bytes
    assert ordered == METADATA


@pytest.mark.postgres  # jsonb orders members itself; SQLite keeps them as written
@pytest.mark.django_db
def test_a_saved_object_reads_back_in_that_order():
    agent = Agent.objects.create(name="Ordered", owner="alice")
    endpoint = Endpoint.objects.create(
        agent=agent, name="main", address="https://a.example", protocol_metadata=METADATA
    )
    endpoint.refresh_from_db()
    stored = endpoint.protocol_metadata
    assert list(stored) == list(json_stored_order(stored))
    assert list(stored["ab"][0]) == list(json_stored_order(stored["ab"][0]))
