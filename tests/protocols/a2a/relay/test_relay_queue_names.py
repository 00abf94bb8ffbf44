"""Whose a queue name is: a relayed endpoint (A2A over AMQP) may not name the registry's or
the job engine's queues, nor a queue another owner's endpoint named first, on any path that
writes endpoints; refused as a problem naming the address, with nothing changed."""

import pytest

from protocols.a2a.models import QueueClaim
from registry.agents.models import Endpoint


def queue(name: str, address: str, protocol: str = "A2A") -> dict:
    return {"name": name, "transport": "Amqp", "protocol": protocol, "address": address}


def reserved_names(settings) -> list[str]:
    return [
        "celery",
        "celeryev.1234",
        settings.WEBHOOK_QUEUE,
        settings.QUEUE_RELAY_REPLY_QUEUE,
        settings.QUEUE_RELAY_DEAD_LETTER_QUEUE,
        "registry.anything",
        "amq.gen-x",
    ]


def assert_refused(response, status: int, path: str) -> None:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert [e["path"] for e in response.json()["errors"]] == [path]


@pytest.mark.django_db
def test_a_relayed_endpoint_may_not_name_a_reserved_queue_on_any_path(
    alice, native_payload, settings
):
    settings.QUEUE_RELAY_REPLY_QUEUE, settings.QUEUE_RELAY_DEAD_LETTER_QUEUE = "rq", "dlq"
    agent = alice.post("/agents", native_payload(), format="json").json()
    http = native_payload()["endpoints"][0]

    for name in reserved_names(settings):
        created = alice.post(
            "/agents", native_payload(endpoints=[http, queue("q", name)]), format="json"
        )
        updated = alice.patch(
            f"/agents/{agent['id']}", {"endpoints": [http, queue("q", name)]}, format="json"
        )
        added = alice.post(f"/agents/{agent['id']}/endpoints", queue("q", name), format="json")
        assert_refused(created, 400, "endpoints[1].address")
        assert_refused(updated, 400, "endpoints[1].address")
        assert_refused(added, 400, "endpoints[1].address")
        assert name in created.json()["detail"]
    assert not Endpoint.objects.filter(transport="Amqp").exists()
    assert not QueueClaim.objects.exists()
    # Not relayed (another protocol), the registry never publishes to it.
    other = native_payload(endpoints=[queue("q", "celery", protocol="MCP")])
    assert alice.post("/agents", other, format="json").status_code == 201


@pytest.mark.django_db
def test_a_queue_is_its_first_owners_until_it_has_no_endpoint_on_it(alice, bob, native_payload):
    http = native_payload()["endpoints"][0]
    alices = alice.post(
        "/agents", native_payload(endpoints=[queue("jobs", "invoices.extract")]), format="json"
    ).json()
    again = alice.post(  # the same owner may name it from another agent
        "/agents",
        native_payload(name="Second", endpoints=[queue("jobs", "invoices.extract")]),
        format="json",
    )
    bobs = bob.post("/agents", native_payload(name="Bob's"), format="json").json()

    taken = [
        bob.post(
            "/agents",
            native_payload(endpoints=[http, queue("jobs", "invoices.extract")]),
            format="json",
        ),
        bob.patch(
            f"/agents/{bobs['id']}",
            {"endpoints": [http, queue("jobs", "invoices.extract")]},
            format="json",
        ),
        bob.post(f"/agents/{bobs['id']}/endpoints", queue("j", "invoices.extract"), format="json"),
    ]

    assert again.status_code == 201
    for response in taken:
        assert_refused(response, 409, "endpoints[1].address")
        assert response.json()["type"].endswith("/queue-name-taken")
    assert list(QueueClaim.objects.values_list("name", "owner")) == [("invoices.extract", "alice")]
    assert Endpoint.objects.filter(address="invoices.extract").count() == 2

    # Alice leaves the queue (one agent moves to another, the other is deleted): released.
    alice.patch(f"/agents/{alices['id']}", {"endpoints": [http]}, format="json")
    assert QueueClaim.objects.filter(owner="alice").exists()  # her second agent is on it
    alice.delete(f"/agents/{again.json()['id']}")
    moved = bob.post(
        f"/agents/{bobs['id']}/endpoints", queue("j", "invoices.extract"), format="json"
    )
    assert moved.status_code == 201, moved.content
    assert list(QueueClaim.objects.values_list("name", "owner")) == [("invoices.extract", "bob")]


@pytest.mark.django_db
def test_an_admin_releases_a_queue_name(alice, bob, native_payload, admin_user, client):
    alice.post("/agents", native_payload(endpoints=[queue("jobs", "shared.q")]), format="json")
    bobs = bob.post("/agents", native_payload(name="Bob's"), format="json").json()
    assert (
        bob.post(
            f"/agents/{bobs['id']}/endpoints", queue("j", "shared.q"), format="json"
        ).status_code
        == 409
    )

    client.force_login(admin_user)
    response = client.post("/admin/a2a/queueclaim/shared.q/delete/", {"post": "yes"}, follow=False)

    assert response.status_code == 302
    assert (
        bob.post(
            f"/agents/{bobs['id']}/endpoints", queue("j", "shared.q"), format="json"
        ).status_code
        == 201
    )


@pytest.mark.django_db
def test_nothing_is_relayed_to_a_reserved_queue_or_for_a_retired_agent(
    client, alice, native_payload, settings
):
    """Endpoints written before their name was reserved, or left by a retired agent, relay
    nothing."""
    made = [
        alice.post("/agents", native_payload(endpoints=[queue("q", name)]), format="json").json()
        for name in ("old.q", "kept.q")
    ]
    settings.QUEUE_RELAY_RESERVED_PREFIXES = ["old."]
    alice.delete(f"/agents/{made[1]['id']}")

    for agent in made:
        response = client.post(
            f"/a2a/queue/{agent['endpoints'][0]['id']}", {}, content_type="application/json"
        )
        assert response.status_code == 404, response.content
        assert response["Content-Type"] == "application/problem+json"


@pytest.mark.django_db
def test_a_transferred_agent_takes_its_queue_along_unless_its_owner_keeps_using_it(
    alice, bob, native_payload
):
    made = [
        alice.post(
            "/agents", native_payload(name=name, endpoints=[queue("q", address)]), format="json"
        ).json()
        for name, address in (("Moves", "moves.q"), ("Shares", "shared.q"), ("Stays", "shared.q"))
    ]

    outcomes = []
    for agent in made[:2]:
        transfer = alice.post(
            f"/agents/{agent['id']}/transfers", {"toOwner": "bob"}, format="json"
        ).json()
        outcomes.append(bob.post(f"/transfers/{transfer['id']}/accept"))

    assert outcomes[0].status_code == 200
    assert_refused(outcomes[1], 409, "endpoints[0].address")
    assert sorted(QueueClaim.objects.values_list("name", "owner")) == [
        ("moves.q", "bob"),
        ("shared.q", "alice"),
    ]
