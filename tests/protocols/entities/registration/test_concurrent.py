"""Registrations of the same domain that race end as one card and one entity."""

import threading

import httpx
import pytest

from protocols.entities.models import Entity, EntityCard
from registry.agents.models import Agent
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]


@pytest.mark.django_db(transaction=True)
def test_racing_registrations_of_a_domain_store_it_once(
    live_server, network, https_server, at, make_key
):
    publish(https_server, example("edp-v0.1-multi-mcp"))
    auth = {"Authorization": f"Bearer {make_key('alice')}"}
    answers: list[httpx.Response] = []
    with httpx.Client(base_url=live_server.url, headers=auth, timeout=60) as client:

        def register() -> None:
            answers.append(client.post("/entities", json={"domain": at("lepetitzinc.fr")}))

        threads = [threading.Thread(target=register) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 201], [
        a.text[:300] for a in answers
    ]
    assert EntityCard.objects.count() == Entity.objects.count() == Agent.objects.count() == 1
