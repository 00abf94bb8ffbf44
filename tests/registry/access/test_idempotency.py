"""Idempotency keys: a retried POST that creates replays its first answer and creates
nothing; another body with the same key is 422; a retry while the first is in flight
waits for it or gets 409; records are pruned after their time."""

import threading
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command
from django.utils import timezone

from registry.access.idempotency import request_fingerprint
from registry.access.keys import api_key_create
from registry.access.models import ApiKey, IdempotentRequest
from registry.agents.models import Agent, DomainClaim, OwnershipTransfer

pytestmark = pytest.mark.django_db


def post(client, path, body, key="k-1"):
    return client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retried_native_registration_replays_the_first_answer(alice, native_payload):
    first = post(alice, "/agents", native_payload())
    again = post(alice, "/agents", native_payload())
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again["Location"] == first["Location"]
    assert again["Content-Type"] == "application/json"
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Agent.objects.count() == 1


def test_the_same_key_with_another_body_is_422_and_creates_nothing(alice, native_payload):
    post(alice, "/agents", native_payload())
    reused = post(alice, "/agents", native_payload(name="Other"))
    assert reused.status_code == 422
    assert reused["Content-Type"] == "application/problem+json"
    assert reused.json()["type"] == "/problems/idempotency-key-reused"
    assert Agent.objects.count() == 1


def test_keys_belong_to_their_api_key(alice, bob, native_payload):
    assert post(alice, "/agents", native_payload()).status_code == 201
    assert post(bob, "/agents", native_payload()).status_code == 201
    assert Agent.objects.count() == 2


def test_a_refusal_is_not_kept_so_the_retry_runs_again(alice, native_payload):
    refused = post(alice, "/agents", native_payload(name=""))
    assert refused.status_code == 400
    assert IdempotentRequest.objects.count() == 0
    assert post(alice, "/agents", native_payload(name="")).status_code == 400
    assert "Idempotent-Replayed" not in post(alice, "/agents", native_payload(name=""))


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/a2a/agents", "card", marks=pytest.mark.apps("a2a")),
        pytest.param("/v1/provider/register", "provider", marks=pytest.mark.apps("entities")),
        ("/api-keys", "key"),
    ],
)
def test_every_creating_post_is_idempotent(
    path, body, admin_client, make_card, monkeypatch, settings
):
    if body == "card":
        payload = {"card": make_card()}
    elif body == "key":
        payload = {"owner": "carol"}
    else:
        from tests.protocols.entities.providers.test_providers import registration

        payload = registration()
    first = post(admin_client, path, payload)
    again = post(admin_client, path, payload)
    assert first.status_code in (200, 201)
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert again["Idempotent-Replayed"] == "true"
    if body == "key":
        assert ApiKey.objects.filter(owner="carol").count() == 1
        # The answer carries the new key's secret: it is kept encrypted, never readable.
        secret = first.json()["key"].encode()
        assert secret not in bytes(IdempotentRequest.objects.get().body)


@pytest.mark.parametrize("kind", ["claim", "transfer"])
def test_the_owners_creates_are_idempotent(kind, alice, native_payload):
    if kind == "claim":
        path, payload = "/claims", {"domain": "agents.example.com"}
    else:
        agent = alice.post("/agents", native_payload(), format="json").json()
        path, payload = f"/agents/{agent['id']}/transfers", {"toOwner": "bob"}
    first = post(alice, path, payload)
    again = post(alice, path, payload)
    assert first.status_code == 201, first.content
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    model = DomainClaim if kind == "claim" else OwnershipTransfer
    assert model.objects.count() == 1


def test_an_invalid_key_header_is_a_400_naming_it(alice, native_payload):
    response = post(alice, "/agents", native_payload(), key="x" * 256)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "Idempotency-Key", "message": "must be 1 to 255 printable ASCII characters"}
    ]
    assert Agent.objects.count() == 0


def test_a_quoted_key_is_the_same_key(alice, native_payload):
    post(alice, "/agents", native_payload(), key='"abc"')
    assert post(alice, "/agents", native_payload(), key="abc")["Idempotent-Replayed"] == "true"


BODY = b'{"name": "Summarizer"}'


def in_flight(owner_key: ApiKey, key: str, started_ago: float = 0) -> IdempotentRequest:
    """A record of a request still in flight (as another process leaves it while it runs)."""
    now = timezone.now()
    return IdempotentRequest.objects.create(
        key=owner_key,
        idempotency_key=key,
        fingerprint=request_fingerprint("POST", "/agents", BODY),
        created_at=now,
        started_at=now - timedelta(seconds=started_ago),
    )


def test_a_duplicate_of_a_request_in_flight_gets_409_after_waiting(anon, settings, native_payload):
    settings.IDEMPOTENCY_WAIT_SECONDS = 0
    record, raw = api_key_create(owner="alice")
    in_flight(record, "k-1")
    response = anon.generic(
        "POST",
        "/agents",
        BODY,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_IDEMPOTENCY_KEY="k-1",
    )
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/idempotency-in-progress"
    assert response["Retry-After"] == "1"
    assert Agent.objects.count() == 0


def test_a_request_that_died_in_flight_is_run_again_by_its_retry(anon, settings, native_payload):
    settings.IDEMPOTENCY_STALE_SECONDS = 60
    record, raw = api_key_create(owner="alice")
    in_flight(record, "k-1", started_ago=61)
    response = anon.generic(
        "POST",
        "/agents",
        BODY,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_IDEMPOTENCY_KEY="k-1",
    )
    assert response.status_code == 201
    assert IdempotentRequest.objects.get().status == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_create_one_agent(live_server, native_payload):
    _, raw = api_key_create(owner="alice")
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "together"}
    answers = []

    def send():
        answers.append(
            httpx.post(f"{live_server.url}/agents", json=native_payload(), headers=headers)
        )

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    statuses = sorted(answer.status_code for answer in answers)
    assert set(statuses) <= {201, 409}, [a.text for a in answers]
    assert Agent.objects.count() == 1
    created = {a.json()["id"] for a in answers if a.status_code == 201}
    assert len(created) == 1
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == (
        statuses.count(201) - 1
    )


def test_records_past_their_time_are_pruned_by_the_command(alice, native_payload, settings):
    post(alice, "/agents", native_payload(), key="old")
    post(alice, "/agents", native_payload(name="New"), key="new")
    IdempotentRequest.objects.filter(idempotency_key="old").update(
        created_at=timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS + 1)
    )
    call_command("idempotency_prune")
    assert list(IdempotentRequest.objects.values_list("idempotency_key", flat=True)) == ["new"]
    # The old key is free again: a new request with it creates.
    assert "Idempotent-Replayed" not in post(alice, "/agents", native_payload(), key="old")
    assert Agent.objects.count() == 3


def test_the_prune_job_is_scheduled():
    from registry import extensions

    schedules = {schedule.name: schedule for schedule in extensions.schedules.read()}
    assert schedules["idempotency-prune"].task == "registry.access.tasks.idempotency_prune"
