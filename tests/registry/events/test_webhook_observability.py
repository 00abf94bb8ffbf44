"""A webhook says which request caused it (X-Request-Id), and the time from the event's
commit to its delivery is counted (registry_webhook_delivery_lag_seconds)."""

from pathlib import Path

import pytest

from tests.registry.events.conftest import register, subscribe
from tests.registry.observability.conftest import own_counts, value

pytest_plugins = ["tests.https_server"]


@pytest.mark.django_db(transaction=True)
def test_a_webhook_carries_its_requests_id_and_its_lag_is_counted(
    receiver, alice, native_payload, settings
):
    subscribe(alice, receiver)
    folder = Path(settings.PROMETHEUS_MULTIPROC_DIR)
    lag = "registry_webhook_delivery_lag_seconds_count"
    before = value(own_counts(folder), lag)
    answer = alice.post("/agents", native_payload(), format="json", HTTP_X_REQUEST_ID="ops-hook-1")
    assert answer.status_code == 201
    register(alice, native_payload())  # another request: its own id
    (first, second) = receiver.received
    headers = [{k.lower(): v for k, v in r["headers"].items()} for r in (first, second)]
    assert headers[0]["x-request-id"] == "ops-hook-1"
    assert headers[1]["x-request-id"] not in ("", "ops-hook-1")
    assert value(own_counts(folder), lag) - before == 2
