"""A restricted agent's changes (registry.agents.visibility) reach those who may read it,
and no one else: webhooks (checked again when each is sent), the event stream, and the
change feed's tombstones."""

import pytest
from django.utils import timezone

from registry.agents.models import Tombstone
from registry.agents.visibility import Reader
from registry.events.delivery import webhooks_deliver
from registry.events.models import Delivery, Event
from registry.events.stream import StreamQuery, frames
from tests.registry.events.conftest import register, subscribe
from tests.registry.events.receiver import Receiver

pytest_plugins = ["tests.https_server"]


@pytest.fixture
def receivers(receiver, tls_server_context):
    """A receiver each for alice, bob and carol (another owner, in group team-a)."""
    others = [Receiver(tls_server_context), Receiver(tls_server_context)]
    yield [receiver, *others]
    for other in others:
        other.stop()


def _types(receiver: Receiver) -> list[tuple[str, str]]:
    """(short type, subject) of what the receiver got, in order."""
    return [
        (r["event"]["type"].removeprefix("org.a2a-registry."), r["event"].get("subject", ""))
        for r in receiver.received
    ]


def _in_group(admin_client, client, groups):
    key_id = client.get("/api-keys").json()["results"][0]["id"]
    answer = admin_client.patch(f"/api-keys/{key_id}", {"groups": groups}, format="json")
    assert answer.status_code == 200, answer.content


@pytest.mark.django_db(transaction=True)
def test_webhooks_deliver_a_restricted_agents_changes_to_those_who_may_read_it_only(
    receivers, alice, bob, client_for, admin_client, native_payload
):
    carol = client_for("carol")
    _in_group(admin_client, carol, ["team-a"])
    for client, receiver in zip((alice, bob, carol), receivers, strict=True):
        subscribe(client, receiver)
    mine, theirs, hers = receivers

    agent_id = register(alice, {**native_payload(), "visibility": "private"})
    assert _types(mine) == [("agent.created", agent_id)]
    assert _types(theirs) == _types(hers) == []
    # The event's data is the listing its readers see.
    assert mine.received[0]["event"]["data"]["visibility"] == "private"

    patch = {"visibility": "groups", "visibilityGroups": ["team-a"]}
    assert alice.patch(f"/agents/{agent_id}", patch, format="json").status_code == 200
    assert _types(mine)[1:] == _types(hers) == [("agent.updated", agent_id)]
    assert _types(theirs) == []

    alice.patch(f"/agents/{agent_id}", {"visibility": "public"}, format="json")
    assert _types(theirs) == [("agent.created", agent_id)]  # news to bob
    # Private again: gone for bob (its tombstone); for alice, gone and back at once.
    alice.patch(f"/agents/{agent_id}", {"visibility": "private"}, format="json")
    assert _types(theirs)[1:] == [("agent.deleted", agent_id)]
    assert _types(mine)[-2:] == [("agent.deleted", agent_id), ("agent.created", agent_id)]
    assert _types(hers)[-1] == ("agent.deleted", agent_id)
    assert (mine.bad_signatures, theirs.bad_signatures, hers.bad_signatures) == (0, 0, 0)


@pytest.mark.django_db(transaction=True)
def test_a_queued_delivery_the_subscription_may_no_longer_read_is_withheld_not_sent(
    receivers, alice, client_for, admin_client, native_payload
):
    carol = client_for("carol")
    _in_group(admin_client, carol, ["team-a"])
    hers = receivers[2]
    created = subscribe(carol, hers)
    hers.statuses = [500]  # the first delivery fails: it waits for its retry
    payload = {**native_payload(), "visibility": "groups", "visibilityGroups": ["team-a"]}
    agent_id = register(alice, payload)
    assert len(hers.received) == 1
    delivery = Delivery.objects.get(subscription_id=created["id"])
    assert delivery.status == Delivery.Status.PENDING

    _in_group(admin_client, carol, [])  # out of the group before the retry
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    webhooks_deliver()
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.WITHHELD
    assert len(hers.received) == 1  # the failed attempt only
    shown = carol.get(f"/subscriptions/{created['id']}/deliveries").json()["results"]
    assert [d["status"] for d in shown] == ["withheld"]
    # Its later events are not queued for her at all.
    alice.patch(f"/agents/{agent_id}", {"name": "Renamed"}, format="json")
    assert Delivery.objects.filter(subscription_id=created["id"]).count() == 1


@pytest.mark.django_db
def test_the_stream_frames_a_restricted_agents_events_for_its_readers_only(alice, native_payload):
    after = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    payload = {**native_payload(), "visibility": "groups", "visibilityGroups": ["team-a"]}
    agent_id = register(alice, payload)
    events = list(Event.objects.filter(id__gt=after).order_by("id"))
    assert [(e.type, e.audience) for e in events] == [("agent.created", "readers")]

    def framed(reader):
        return b"".join(frames(StreamQuery(since=after, reader=reader), events))

    assert framed(None) == b""
    assert framed(Reader("bob")) == b""
    assert framed(Reader("bob", groups=("team-b",))) == b""
    for reader in (Reader("alice"), Reader("bob", groups=("team-a",)), Reader("ops", True)):
        assert agent_id.encode() in framed(reader)


@pytest.mark.django_db
def test_the_change_feed_shows_a_restricted_agents_deletion_to_its_readers_only(
    alice, bob, anon, admin_client, native_payload
):
    since = timezone.now().isoformat().replace("+00:00", "Z")

    def deleted(client) -> list[str]:
        answer = client.get("/discover/agents", {"updated_since": since, "limit": 100})
        assert answer.status_code == 200, answer.content
        return [d["id"] for d in answer.json()["deleted"]]

    def changed(client) -> list[str]:
        answer = client.get("/discover/agents", {"updated_since": since, "limit": 100})
        return [a["id"] for a in answer.json()["results"]]

    hidden = register(alice, {**native_payload(), "visibility": "private"})
    alice.delete(f"/agents/{hidden}")
    assert Tombstone.objects.get(agent_id=hidden).public is False
    for outsider in (anon, bob):
        assert hidden not in deleted(outsider)
    for reader in (alice, admin_client):
        assert hidden in deleted(reader)

    # Public, then private: the public feed sees it deleted; its owner's, changed.
    withdrawn = register(alice, native_payload())
    alice.patch(f"/agents/{withdrawn}", {"visibility": "private"}, format="json")
    assert withdrawn in deleted(anon) and withdrawn not in changed(anon)
    assert withdrawn in changed(alice) and withdrawn not in deleted(alice)
    # Retired after that, it stays in the public feed's deleted (the public knew it).
    alice.delete(f"/agents/{withdrawn}")
    assert Tombstone.objects.get(agent_id=withdrawn).public is True
    assert withdrawn in deleted(anon) and withdrawn in deleted(alice)


@pytest.mark.django_db(transaction=True)
def test_a_subscription_made_with_a_token_reads_with_the_tokens_groups_then(receiver):
    """A token's group claim cannot be asked again at delivery: the subscription keeps the
    groups it had; one made with a key reads with that key's groups as they are then."""
    from registry.access.auth import Principal
    from registry.access.models import ApiKey
    from registry.access.tokens import TokenIdentity
    from registry.events.delivery import subscription_reader
    from registry.events.subscriptions import subscription_create

    identity = TokenIdentity("https://idp.test", "u1", "carol", False, ("team-a",), 0, "h")
    by_token, _ = subscription_create(
        owner="carol", url=receiver.url(), events=[], filter={}, principal=Principal(token=identity)
    )
    assert (by_token.key_id, by_token.groups) == (None, ["team-a"])
    assert subscription_reader(by_token) == Reader("carol", False, ("team-a",))
    key = ApiKey.objects.create(owner="carol", key_hash="k" * 64, prefix="k", groups=["x"])
    by_key, _ = subscription_create(
        owner="carol", url=receiver.url(), events=[], filter={}, principal=Principal(key=key)
    )
    assert (by_key.key_id, by_key.groups) == (key.pk, [])
    assert subscription_reader(by_key) == Reader("carol", False, ("x",))
    ApiKey.objects.filter(pk=key.pk).update(groups=["team-b"])
    assert subscription_reader(by_key).groups == ("team-b",)
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    assert subscription_reader(by_key).groups == ()  # a revoked key: no group
