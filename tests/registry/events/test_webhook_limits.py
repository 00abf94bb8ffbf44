"""Webhooks cannot be aimed at an address that never agreed, nor used to flood one: the
handshake activates only the URL it verified, handshakes and redeliveries are bounded per
owner, an owner's slow receivers hold a few of the webhook jobs at most, and the webhook
jobs run on a queue of their own."""

from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from celery import current_app
from django.utils import timezone

from registry.events import subscriptions, tasks
from registry.events.delivery import webhooks_deliver
from registry.events.models import Delivery, Subscription
from tests.registry.events.conftest import register, subscribe
from tests.registry.events.receiver import Receiver

pytest_plugins = ["tests.https_server"]

ROOT = Path(__file__).resolve().parents[3]
# An address nothing answers at (the fetcher allows localhost in these tests).
NOBODY = "https://localhost:9/elsewhere"


@pytest.mark.django_db(transaction=True)
def test_a_url_changed_during_the_handshake_is_not_activated(receiver, alice):
    with mock.patch.object(subscriptions, "_verify_later"):  # the handshake run below
        created = subscribe(alice, receiver)
    real_fetch = subscriptions.fetch
    patched = []

    def fetch_then_patch(url, **kwargs):
        # The receiver answers its challenge; before the job locks the row to mark it
        # active, the owner points the subscription at another address.
        result = real_fetch(url, **kwargs)
        if url == receiver.url() and not patched:
            patched.append(
                alice.patch(f"/subscriptions/{created['id']}", {"url": NOBODY}, format="json")
            )
        return result

    with mock.patch.object(subscriptions, "fetch", side_effect=fetch_then_patch):
        assert not tasks.subscription_verify(created["id"])
    assert patched[0].status_code == 200
    assert receiver.verifications == 1
    shown = alice.get(f"/subscriptions/{created['id']}").json()
    assert shown["url"] == NOBODY
    assert (shown["status"], shown["verifiedAt"]) == ("pending", None)
    # The new address's own handshake (deferred while the first held the row) fails.
    assert not tasks.subscription_verify(created["id"])
    shown = alice.get(f"/subscriptions/{created['id']}").json()
    assert (shown["status"], shown["verifiedAt"]) == ("pending", None)
    assert "failed" in shown["statusReason"]


@pytest.mark.django_db
def test_handshakes_count_against_the_owners_hourly_budget(alice, bob, settings):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.WEBHOOK_VERIFY_PER_OWNER_HOUR = 2

    def status(client, method, path, url=None, **body):
        body = {"url": f"https://localhost:9/{url}", **body} if url else body
        answer = getattr(client, method)(path, body, format="json")
        return answer.status_code, answer

    with (
        mock.patch.object(subscriptions, "fetch", side_effect=AssertionError) as fetch,
        mock.patch.object(subscriptions, "_verify_later") as verify_later,
    ):
        code, created = status(alice, "post", "/subscriptions", "a")
        assert code == 201
        path = f"/subscriptions/{created.json()['id']}"
        assert status(alice, "patch", path, "b")[0] == 200
        code, answer = status(alice, "patch", path, "c")
        assert code == 429
        assert answer["Content-Type"] == "application/problem+json"
        assert int(answer["Retry-After"]) > 0
        assert answer.json()["errors"][0]["path"] == "url"
        code, answer = status(alice, "patch", path, active=True)
        assert (code, answer.json()["errors"][0]["path"]) == (429, "active")
        code, answer = status(alice, "post", "/subscriptions", "d")
        assert (code, answer.json()["errors"][0]["path"]) == (429, "url")
        # A change that needs no handshake goes through; another owner has its own budget.
        assert status(alice, "patch", path, description="x")[0] == 200
        assert status(bob, "post", "/subscriptions", "e")[0] == 201
    assert verify_later.call_count == 3 and not fetch.called
    assert alice.get(path).json()["url"] == "https://localhost:9/b"
    assert Subscription.objects.filter(owner="alice").count() == 1


@pytest.mark.django_db(transaction=True)
def test_redelivery_is_bounded_per_request_and_per_owner_hour(
    receiver, alice, native_payload, settings
):
    settings.WEBHOOK_REDELIVER_MAX = 2
    settings.WEBHOOK_REDELIVER_PER_OWNER_HOUR = 3
    created = subscribe(alice, receiver)
    for name in ("First", "Second", "Third"):
        register(alice, native_payload(name=name))
    ids = [int(r["event"]["id"]) for r in receiver.received]
    assert len(ids) == 3
    path = f"/subscriptions/{created['id']}/redeliver"
    answer = alice.post(path, {"since": ids[0] - 1}, format="json")
    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/problem+json"
    assert answer.json()["errors"][0]["path"] == "since"
    assert Delivery.objects.count() == 3  # nothing queued
    assert alice.post(path, {"since": ids[0]}, format="json").json() == {"queued": 2}
    answer = alice.post(path, {"since": ids[0]}, format="json")
    assert answer.status_code == 429
    assert answer["Content-Type"] == "application/problem+json"
    assert int(answer["Retry-After"]) > 0
    assert answer.json()["errors"][0]["path"] == "since"
    assert Delivery.objects.count() == 5
    assert len(receiver.received) == 5


@pytest.mark.django_db(transaction=True)
def test_an_owner_has_few_verifications_in_flight(alice, settings):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER = 1
    with mock.patch.object(subscriptions, "_verify_later"):
        first = alice.post("/subscriptions", {"url": "https://localhost:9/a"}, format="json")
        second = alice.post("/subscriptions", {"url": "https://localhost:9/b"}, format="json")
    # The first one's handshake is under way (its receiver is slow).
    soon = timezone.now() + timedelta(seconds=30)
    Subscription.objects.filter(pk=first.json()["id"]).update(leased_until=soon)
    with (
        mock.patch.object(subscriptions, "fetch", side_effect=AssertionError) as fetch,
        mock.patch.object(tasks.subscription_verify, "apply_async") as later,
    ):
        assert tasks.subscription_verify(second.json()["id"]) is None
    assert not fetch.called
    (args, kwargs) = later.call_args
    assert args == ((second.json()["id"],),) and kwargs["countdown"] > 0
    assert Subscription.objects.get(pk=second.json()["id"]).status == "pending"


@pytest.mark.django_db(transaction=True)
def test_an_owner_has_few_deliveries_in_flight(
    tls_server_context, receiver, alice, native_payload, settings
):
    settings.WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER = 1
    other = Receiver(tls_server_context)
    try:
        slow = subscribe(alice, receiver)
        subscribe(alice, other)
        # The first receiver is being sent an event (slowly): the owner's one in flight.
        soon = timezone.now() + timedelta(seconds=30)
        Subscription.objects.filter(pk=slow["id"]).update(leased_until=soon)
        register(alice, native_payload())
        assert other.received == [] and receiver.received == []
        # Once it is done, the job that serves the one queues another for the other.
        Subscription.objects.filter(pk=slow["id"]).update(leased_until=None)
        webhooks_deliver()
        assert len(other.received) == 1 and len(receiver.received) == 1
    finally:
        other.stop()


@pytest.mark.django_db(transaction=True)
def test_a_verification_queues_the_deliveries_and_does_not_send_them(receiver, alice):
    with mock.patch.object(subscriptions, "_verify_later"):
        created = subscribe(alice, receiver)
    with (
        mock.patch.object(tasks, "webhooks_deliver", side_effect=AssertionError) as inline,
        mock.patch.object(tasks.webhooks_dispatch, "apply_async") as queued,
    ):
        assert tasks.subscription_verify(created["id"]) is True
    assert not inline.called and queued.called
    assert Subscription.objects.get(pk=created["id"]).status == "active"


@pytest.mark.django_db
def test_the_sweep_queues_the_deliveries_and_does_not_send_them(
    django_capture_on_commit_callbacks,
):
    with (
        mock.patch.object(tasks, "webhooks_deliver", side_effect=AssertionError) as inline,
        mock.patch.object(tasks.webhooks_dispatch, "apply_async") as queued,
        django_capture_on_commit_callbacks(execute=True),
    ):
        tasks.events_sweep()
    assert not inline.called and queued.called


def test_the_webhook_jobs_run_on_their_own_queue_and_a_worker_consumes_it(settings):
    router = current_app.amqp.router
    for name in ("webhooks_dispatch", "subscription_verify"):
        route = router.route({}, f"registry.events.tasks.{name}")
        assert route["queue"].name == settings.WEBHOOK_QUEUE == "webhooks"
    for name in ("events_sweep", "events_prune"):
        assert router.route({}, f"registry.events.tasks.{name}")["queue"].name == "celery"
    for procfile in ("Procfile", "Procfile.serve"):
        lines = (ROOT / procfile).read_text().splitlines()
        workers = [line for line in lines if " worker " in line]
        consume = ("-Q webhooks", "-Q ${WEBHOOK_QUEUE:-webhooks}")
        assert any(q in line for line in workers for q in consume), procfile
