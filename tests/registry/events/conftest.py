"""The webhook tests' receiver (a real local HTTPS server, tests/registry/events/receiver.py)
and their helpers."""

import pytest

from tests.registry.events.receiver import Receiver


@pytest.fixture
def receiver(tls_server_context, ca_bundle, settings):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.WEBHOOK_RETRY_FIRST_SECONDS = 0
    receiver = Receiver(tls_server_context)
    yield receiver
    receiver.stop()


def subscribe(client, receiver, **body) -> dict:
    answer = client.post("/subscriptions", {"url": receiver.url(), **body}, format="json")
    assert answer.status_code == 201, answer.json()
    receiver.secret = answer.json()["secret"]
    return answer.json()


def register(client, payload: dict) -> str:
    answer = client.post("/agents", payload, format="json")
    assert answer.status_code == 201
    return answer.json()["id"]
