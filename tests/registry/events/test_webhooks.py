"""Webhooks against a real local receiver: the handshake, signatures verified with the
Standard Webhooks library, order, retries after a 500, disabling after a 410."""

import json
import re
from pathlib import Path

import pytest
from django.utils import timezone

from registry.events import envelope
from registry.events.delivery import webhooks_deliver
from registry.events.models import Delivery, Subscription
from tests.registry.events.conftest import register, subscribe
from tests.registry.observability.conftest import own_counts, value

pytest_plugins = ["tests.https_server"]
DELIVERIES = "registry_webhook_deliveries_total"


@pytest.mark.django_db(transaction=True)
def test_a_verified_receiver_gets_each_change_signed_and_in_order(receiver, alice, native_payload):
    created = subscribe(alice, receiver)
    assert created["status"] == "pending"
    assert created["secret"].startswith("whsec_")
    assert alice.get(f"/subscriptions/{created['id']}").json()["status"] == "active"
    assert "secret" not in alice.get(f"/subscriptions/{created['id']}").json()
    agent_id = register(alice, native_payload())
    alice.patch(f"/agents/{agent_id}", {"name": "Renamed"}, format="json")
    assert receiver.verifications == 1
    assert receiver.bad_signatures == 0
    types = [r["event"]["type"] for r in receiver.received]
    assert types == ["org.a2a-registry.agent.created", "org.a2a-registry.agent.updated"]
    assert receiver.received[1]["event"]["data"]["name"] == "Renamed"
    ids = [int(r["headers"]["webhook-id"]) for r in receiver.received]
    assert ids == [int(r["event"]["id"]) for r in receiver.received] and ids == sorted(ids)
    deliveries = alice.get(f"/subscriptions/{created['id']}/deliveries").json()["results"]
    assert [(d["status"], d["lastStatusCode"]) for d in deliveries] == [("delivered", 200)] * 2


@pytest.mark.django_db(transaction=True)
def test_a_refused_handshake_sends_nothing_else(receiver, alice, native_payload):
    receiver.answer_challenge = False
    created = subscribe(alice, receiver)
    register(alice, native_payload())
    webhooks_deliver()
    shown = alice.get(f"/subscriptions/{created['id']}").json()
    assert shown["status"] == "pending"
    assert "challenge" in shown["statusReason"]
    assert receiver.verifications == 1
    assert receiver.received == []


@pytest.mark.django_db(transaction=True)
def test_a_500_is_retried_and_later_events_wait_behind_it(
    receiver, alice, native_payload, settings
):
    settings.WEBHOOK_RETRY_FIRST_SECONDS = 60
    created = subscribe(alice, receiver)
    receiver.statuses = [500]
    agent_id = register(alice, native_payload())
    alice.patch(f"/agents/{agent_id}", {"name": "Later"}, format="json")
    assert len(receiver.received) == 1  # the 500: the next one waits
    delivery = Delivery.objects.order_by("id").first()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    wait = (delivery.next_attempt_at - delivery.last_attempt_at).total_seconds()
    assert 48 <= wait <= 72  # the first delay, with jitter
    webhooks_deliver()
    assert len(receiver.received) == 1  # not due yet
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    webhooks_deliver()  # the sweep, once the retry is due
    types = [r["event"]["type"].rsplit(".", 1)[1] for r in receiver.received]
    assert types == ["created", "created", "updated"]
    assert (
        receiver.received[0]["headers"]["webhook-id"]
        == receiver.received[1]["headers"]["webhook-id"]
    )
    shown = alice.get(f"/subscriptions/{created['id']}/deliveries").json()["results"]
    assert [(d["status"], d["attempts"]) for d in shown] == [("delivered", 1), ("delivered", 2)]


@pytest.mark.django_db(transaction=True)
def test_a_410_disables_the_subscription_at_once(receiver, alice, native_payload):
    created = subscribe(alice, receiver)
    receiver.statuses = [410]
    register(alice, native_payload())
    register(alice, native_payload(name="Second"))
    webhooks_deliver()
    shown = alice.get(f"/subscriptions/{created['id']}").json()
    assert shown["status"] == "disabled"
    assert "410" in shown["statusReason"]
    assert len(receiver.received) == 1


@pytest.mark.django_db(transaction=True)
def test_retries_stop_after_the_retry_window_and_disable(receiver, alice, native_payload, settings):
    settings.WEBHOOK_RETRY_MAX_SECONDS = 0
    created = subscribe(alice, receiver)
    receiver.statuses = [503]
    register(alice, native_payload())
    shown = alice.get(f"/subscriptions/{created['id']}").json()
    assert shown["status"] == "disabled"
    assert "failed for too long" in shown["statusReason"]


@pytest.mark.django_db(transaction=True)
def test_a_filter_sends_only_the_matching_agents(receiver, alice, native_payload):
    subscribe(alice, receiver, filter={"tag": "weather"})
    register(alice, native_payload())  # tagged nlp
    weather = [{"name": "forecast", "tags": ["weather"]}]
    wanted = register(alice, native_payload(name="Forecaster", capabilities=weather))
    assert [r["event"]["subject"] for r in receiver.received] == [wanted]


@pytest.mark.django_db(transaction=True)
def test_redeliver_replays_from_a_cursor(receiver, alice, native_payload):
    created = subscribe(alice, receiver)
    register(alice, native_payload())
    first = int(receiver.received[0]["event"]["id"])
    answer = alice.post(
        f"/subscriptions/{created['id']}/redeliver", {"since": first - 1}, format="json"
    )
    assert answer.json() == {"queued": 1}
    assert [r["event"]["id"] for r in receiver.received] == [str(first), str(first)]


@pytest.mark.django_db
def test_private_and_plain_http_receivers_are_refused_at_creation(alice, settings):
    settings.FETCH_ALLOWED_HOSTS = []
    for url in ("https://127.0.0.1/hook", "https://10.0.0.8/hook", "http://example.com/hook"):
        answer = alice.post("/subscriptions", {"url": url}, format="json")
        assert answer.status_code == 400, url
        assert answer["Content-Type"] == "application/problem+json"
        assert answer.json()["errors"][0]["path"] == "url"
    assert Subscription.objects.count() == 0


DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.mark.django_db(transaction=True)
def test_the_mirror_guides_subscription_hears_that_an_agent_was_deleted(
    receiver, alice, native_payload
):
    guide = (DOCS / "guides" / "mirror.md").read_text()
    example = json.loads(
        re.search(r"POST localhost:8000/subscriptions .*?-d '(\{.*?\})'", guide, re.S)[1]
    )
    subscribe(alice, receiver, **{**example, "url": receiver.url()})
    tags = [{"name": "forecast", "tags": [example["filter"]["tag"]]}]
    agent_id = register(alice, native_payload(capabilities=tags))
    assert alice.delete(f"/agents/{agent_id}").status_code == 204
    types = [r["event"]["type"].removeprefix(envelope.TYPE_PREFIX) for r in receiver.received]
    assert types == ["agent.created", "agent.retired"]


def test_the_events_reference_lists_every_event_type():
    table = (DOCS / "reference" / "events.md").read_text().split("## Types")[1].split("##")[0]
    listed = re.findall(
        r"`([a-z]+\.[a-z_]+)`",
        "\n".join(line.split("|")[1] for line in table.splitlines() if line.startswith("| `")),
    )
    assert sorted(listed) == sorted(envelope.EVENT_TYPES)


@pytest.mark.django_db
def test_bad_events_and_filters_name_the_field(alice, settings):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    url = "https://localhost:9/hook"
    answer = alice.post("/subscriptions", {"url": url, "events": ["agent.nope"]}, format="json")
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["path"] == "events[0]"
    assert all(name in answer.json()["detail"] for name in envelope.EVENT_TYPES)
    answer = alice.post("/subscriptions", {"url": url, "filter": {"colour": "x"}}, format="json")
    assert answer.json()["errors"][0]["path"] == "filter.colour"
    answer = alice.post("/subscriptions", {"url": url, "filter": {"protocol": "x"}}, format="json")
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["path"] == "filter.protocol"
    assert Subscription.objects.count() == 0


@pytest.mark.django_db
def test_a_key_sees_only_its_owners_subscriptions_and_admins_all(
    alice, bob, admin_client, settings
):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    mine = alice.post("/subscriptions", {"url": "https://localhost:9/a"}, format="json").json()
    assert bob.get(f"/subscriptions/{mine['id']}").status_code == 404
    assert bob.delete(f"/subscriptions/{mine['id']}").status_code == 404
    assert bob.get("/subscriptions").json()["results"] == []
    assert [s["id"] for s in admin_client.get("/subscriptions").json()["results"]] == [mine["id"]]
    assert alice.delete(f"/subscriptions/{mine['id']}").status_code == 204
    assert alice.get("/subscriptions").json()["results"] == []


@pytest.mark.django_db(transaction=True)
def test_a_failed_handshake_is_tried_again_when_switched_on(receiver, alice, native_payload):
    receiver.answer_challenge = False
    created = subscribe(alice, receiver)
    receiver.answer_challenge = True
    answer = alice.patch(f"/subscriptions/{created['id']}", {"active": True}, format="json")
    assert answer.status_code == 200
    assert alice.get(f"/subscriptions/{created['id']}").json()["status"] == "active"
    agent_id = register(alice, native_payload())
    assert [r["event"]["subject"] for r in receiver.received] == [agent_id]
    assert receiver.verifications == 2


@pytest.mark.django_db(transaction=True)
def test_after_a_rotation_deliveries_are_signed_with_the_new_secret(
    receiver, alice, native_payload
):
    created = subscribe(alice, receiver)
    old = receiver.secret
    rotated = alice.post(f"/subscriptions/{created['id']}/rotate-secret").json()["secret"]
    register(alice, native_payload())  # signed with the new secret: the old one fails
    assert receiver.bad_signatures == 1 and receiver.received == []
    receiver.secret = rotated
    assert rotated != old
    Delivery.objects.update(next_attempt_at=timezone.now())
    webhooks_deliver()
    assert receiver.bad_signatures == 1
    assert [r["event"]["type"] for r in receiver.received] == ["org.a2a-registry.agent.created"]


@pytest.mark.django_db(transaction=True)
def test_delivery_attempts_are_counted_by_outcome(receiver, alice, native_payload, settings):
    def counts() -> dict:
        # This process's counts: a scrape adds up every process of the run's metrics folder,
        # and servers other tests started may deliver beside this one.
        samples = own_counts(Path(settings.PROMETHEUS_MULTIPROC_DIR))
        return {o: value(samples, DELIVERIES, outcome=o) for o in ("delivered", "retry", "failed")}

    subscribe(alice, receiver)
    before = counts()
    receiver.statuses = [500, 410]
    register(alice, native_payload())  # a 500: to be retried
    Delivery.objects.update(next_attempt_at=timezone.now())
    webhooks_deliver()  # a 410: given up
    after = counts()
    assert {o: after[o] - before[o] for o in after} == {"delivered": 0, "retry": 1, "failed": 1}
