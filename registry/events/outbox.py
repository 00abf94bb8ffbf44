"""The outbox: every committed change is an ``Event`` row written in the change's own
transaction, so an event exists exactly when its change committed, in commit order of
their ids within one writer (the stream and webhooks read ids upward).

The core's writes tell it through its signals: ``agent_changed`` says what a write changed
(kept for the agent until the write's ``agents_written``, which comes once the listings are
rebuilt), then ``agents_written`` writes each agent's events with its fresh listing as
``data`` (a deleted agent's: its tombstone). An app adds an event of its own to a write with
``event_add(agent_id, type)`` before its ``agents_written_send`` (a2a: a card's signature
status), or writes one with ``event_record`` (entities: an entity's JSON); it adds
attributes to the write's agent.created or agent.updated with ``event_extend`` (a2a: the
card version stored).

Once the transaction commits, the stream servers hear of it (PostgreSQL ``NOTIFY`` on
``registry_events``; elsewhere they poll) and the webhook deliverer is queued at once
(``registry.events.tasks.webhooks_dispatch``), not at the scheduler's next period.
"""

import hashlib
import json
import logging
import threading
import uuid
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Max
from django.utils import timezone

from registry.agents.models import Agent, Tombstone
from registry.discovery.listings import listings_built, listings_read
from registry.discovery.models import AgentListing
from registry.events import envelope
from registry.events.models import Event, Subscription
from registry.fastpath.copy import objects_insert
from registry.fastpath.notices import announce
from registry.fastpath.replicas import database_now
from registry.http.request_ids import request_id

logger = logging.getLogger(__name__)

CHANNEL = "registry_events"
CHUNK = 1000

_local = threading.local()


def _pending() -> dict:
    if not hasattr(_local, "pending"):
        _local.pending = {}
    return _local.pending


def on_agent_changed(sender, agent, changed, created=False, **kwargs) -> None:
    """Keep what a write changed for its ``agents_written`` (receiver of agent_changed)."""
    entry = _pending().setdefault(agent.pk, {"created": False, "changed": set(), "types": []})
    entry["created"] = entry["created"] or created
    entry["changed"] |= set(changed)


def event_extend(agent_id: uuid.UUID, **attributes: str) -> None:
    """Add CloudEvents extension attributes to the agent.created or agent.updated event of
    the current write (a2a: the card version it stored, its change summary)."""
    entry = _pending().setdefault(agent_id, {"created": False, "changed": set(), "types": []})
    entry.setdefault("attributes", {}).update(attributes)


def event_add(agent_id: uuid.UUID, type: str, **extensions: str) -> None:
    """Add an event of ``type`` about the agent to the current write: written with the
    agent's fresh listing by the write's ``agents_written`` (send it after this)."""
    entry = _pending().setdefault(agent_id, {"created": False, "changed": set(), "types": []})
    entry["types"].append((type, extensions))


# Lifecycle statuses that are events of their own (registry.agents.lifecycle).
_STATUS_EVENTS = {"deprecated": envelope.AGENT_DEPRECATED, "retired": envelope.AGENT_RETIRED}


def on_agent_status_changed(sender, agent, status, **kwargs) -> None:
    """A deprecation or retirement is its own event (receiver of agent_status_changed; the
    lifecycle write's ``agents_written`` writes it with the agent's listing)."""
    if status in _STATUS_EVENTS:
        event_add(agent.pk, _STATUS_EVENTS[status])


def on_agent_listing_changed(sender, agent, listed, **kwargs) -> None:
    """An agent unlisted is gone from the public feed (agent.deleted, its tombstone); listed
    again, it comes back (agent.created, its listing) (receiver of agent_listing_changed)."""
    entry = _pending().setdefault(agent.pk, {"created": False, "changed": set(), "types": []})
    entry["listing"] = listed


_MODERATED = {
    "quarantined": envelope.AGENT_QUARANTINED,
    "released": envelope.AGENT_RELEASED,
    "approved": envelope.AGENT_APPROVED,
    "rejected": envelope.AGENT_REJECTED,
}


def on_agent_moderated(sender, agent, action, reason="", **kwargs) -> None:
    """A moderator's decision: an event for admin subscribers only (receiver of
    agent_moderated)."""
    data = {"id": str(agent.pk), "name": agent.name, "owner": agent.owner, "reason": reason}
    event = Event(
        type=_MODERATED[action],
        subject=agent.pk,
        time=timezone.now(),
        data=json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode(),
        audience=envelope.ADMIN_AUDIENCE,
    )
    events_insert([event])


def on_moderation_noted(sender, type, data, **kwargs) -> None:
    """A change of the blocklist or the verified publishers: an event for admin subscribers
    only (receiver of moderation_noted)."""
    event = Event(
        type=type,
        subject=None,
        time=timezone.now(),
        data=json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode(),
        audience=envelope.ADMIN_AUDIENCE,
    )
    events_insert([event])


def on_agents_written(sender, agent_ids, **kwargs) -> None:
    """Write the events of the agents a write changed (receiver of agents_written, after
    discovery's: the listings are current)."""
    pending = _pending()
    changes = {pk: pending.pop(pk, None) for pk in agent_ids}
    ids = list(changes)
    for start in range(0, len(ids), CHUNK):
        agent_events_write({pk: changes[pk] for pk in ids[start : start + CHUNK]})


def _digest(body: bytes) -> str:
    return hashlib.sha256(bytes(body)).hexdigest()[:16]


def _last_digests(ids: list) -> dict:
    latest = (
        Event.objects.filter(subject__in=ids)
        .exclude(digest="")
        .values("subject")
        .annotate(last=Max("id"))
        .values("last")
    )
    return dict(Event.objects.filter(id__in=latest).values_list("subject", "digest"))


def agent_events_write(changes: dict) -> int:
    """The events of these agents (id -> what a write changed, or None: an app's rows),
    each with its listing as of now; returns how many were written."""
    ids = list(changes)
    # Unlisted agents make no public event (registry.agents.listing), but the one that
    # withdraws them: their tombstone. A restricted agent's (one moderation admits, not
    # public: registry.agents.visibility) are for those who may read it ("readers").
    unlisted = Agent.objects.filter(pk__in=ids, listed=False)
    unlisted = {pk: (v, a) for pk, v, a in unlisted.values_list("pk", "visibility", "admitted")}
    restricted = {pk for pk, (v, a) in unlisted.items() if a and v != Agent.Visibility.PUBLIC}
    # (An agent created unlisted, waiting for review, was never public: no event at all.)
    withdrawn = [
        pk
        for pk in unlisted
        if (changes[pk] or {}).get("listing") is False and not changes[pk].get("created")
    ]
    ids = [pk for pk in ids if pk not in unlisted or pk in withdrawn or pk in restricted]
    # Those discovery just built as it stores and shows them (no read), the others read.
    built = listings_built(ids)
    bodies = {pk: stored for pk, (stored, _) in built.items()}
    listings = {pk: shown for pk, (_, shown) in built.items()}
    rest = [pk for pk in ids if pk not in built]
    bodies |= dict(AgentListing.objects.filter(agent_id__in=rest).values_list("agent_id", "body"))
    read = [pk for pk in rest if pk in bodies]
    if read:
        listings |= dict(zip(read, listings_read(read).listings, strict=True))
    for pk in withdrawn:  # as a deleted agent's: its tombstone, if it has one
        if pk not in restricted:  # (to its readers, it is there still: created again)
            bodies.pop(pk, None)
            listings.pop(pk, None)
    present = [pk for pk in ids if pk in bodies]
    # (A created agent has no earlier event to compare with.)
    last = _last_digests([pk for pk in present if not (changes[pk] or {}).get("created")])
    gone = [pk for pk in ids if pk not in bodies or pk in withdrawn]
    tombstones = {
        pk: (deleted_at, public)
        for pk, deleted_at, public in Tombstone.objects.filter(agent_id__in=gone).values_list(
            "agent_id", "deleted_at", "public"
        )
    }
    now, rows = database_now(), []
    for pk in ids:
        app_write = changes[pk] is None  # an app's rows: the listing tells what changed
        change = changes[pk] or {"created": False, "changed": set(), "types": []}
        audience = envelope.READERS_AUDIENCE if pk in restricted else ""
        if pk not in listings or pk in withdrawn:
            if pk in tombstones:
                deleted_at, public = tombstones[pk]
                body = {"id": str(pk), "deletedAt": deleted_at.isoformat()}
                rows.append(
                    Event(
                        type=envelope.AGENT_DELETED,
                        subject=pk,
                        time=now,
                        data=json.dumps(body, separators=(",", ":")).encode(),
                        audience="" if public else envelope.READERS_AUDIENCE,
                    )
                )
            if pk not in listings:
                continue
        digest, data = _digest(bodies[pk]), listings[pk]
        types = [(t, ext) for t, ext in change["types"]]
        changed = set(change["changed"])
        attributes = change.get("attributes", {})
        if change["created"] or change.get("listing") or pk in withdrawn:
            types.insert(0, (envelope.AGENT_CREATED, dict(attributes)))
        else:
            if "owner" in changed:
                types.insert(0, (envelope.AGENT_OWNER_CHANGED, {}))
                changed.discard("owner")
            if last.get(pk) != digest and (changed or app_write):
                summary = ",".join(sorted(c for c in changed if ":" not in c))
                extensions = {"changed": summary} if summary else {}
                types.insert(0, (envelope.AGENT_UPDATED, {**extensions, **attributes}))
        rows += [
            Event(
                type=t,
                subject=pk,
                time=now,
                data=data,
                extensions=ext,
                digest=digest,
                audience=audience,
            )
            for t, ext in types
        ]
    return events_insert(rows)


def event_record(
    *, type: str, subject: uuid.UUID | None, data: bytes, extensions: dict | None = None
) -> None:
    """Write one event now, in the current transaction (its ``data``: public JSON bytes)."""
    events_insert(
        [
            Event(
                type=type,
                subject=subject,
                time=database_now(),
                data=data,
                extensions=extensions or {},
            )
        ]
    )


def events_insert(rows: list[Event]) -> int:
    if not rows:
        return 0
    cause = request_id.get()
    if cause:
        for row in rows:
            row.request_id = cause
    objects_insert(rows)
    announce(CHANNEL, ["new"])
    _dispatch_on_commit()
    return len(rows)


def _dispatch_on_commit() -> None:
    """Queue the webhook deliverer once the transaction commits (once per transaction)."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.in_atomic_block and any(entry[1] is dispatch_queue for entry in db.run_on_commit):
        return
    transaction.on_commit(dispatch_queue, robust=True)


def dispatch_queue() -> None:
    """Queue ``webhooks_dispatch`` (by name: the tasks import this module) when anyone
    subscribes; a broker that is down leaves it to the next sweep."""
    if not Subscription.objects.filter(status=Subscription.Status.ACTIVE).exists():
        return
    try:
        current_app.tasks["registry.events.tasks.webhooks_dispatch"].delay()
    except Exception as exc:  # the sweep delivers what was not queued
        logger.warning("Could not queue the webhook deliverer: %s", exc)


def events_prune() -> int:
    """Remove the events older than ``EVENTS_RETENTION_DAYS`` (and their deliveries): a
    stream or a redelivery from before then is told to resync from the change feed."""
    cutoff = timezone.now() - timedelta(days=settings.EVENTS_RETENTION_DAYS)
    last = Event.objects.filter(time__lt=cutoff).aggregate(last=Max("id"))["last"]
    if last is None:
        return 0
    return Event.objects.filter(id__lte=last).delete()[1].get(Event._meta.label, 0)


# Ids are taken when a row is written, not when its transaction commits: a later id may
# commit first. A reader stops before a missing id until the event after it is this old
# (then the missing one was rolled back, or never comes), by the primary's clock, which
# every node's events are written with (``database_now``).
GAP_SECONDS = 5


def events_after(after: int, limit: int, *, with_data: bool = True) -> list[Event]:
    """The committed events after cursor ``after``, in id order, up to the first missing id
    that may still commit (so that no reader moves its cursor past an event to come)."""
    rows = Event.objects.filter(id__gt=after).order_by("id")
    rows = list((rows if with_data else rows.defer("data"))[:limit])
    settled = database_now() - timedelta(seconds=GAP_SECONDS)
    expected = after + 1 if after else None
    for index, event in enumerate(rows):
        if expected is not None and event.id != expected and event.time > settled:
            return rows[:index]
        expected = event.id + 1
    return rows


def oldest_cursor() -> int:
    """The cursor just before the oldest event kept: a replay from before it is incomplete."""
    first = Event.objects.order_by("id").values_list("id", flat=True).first()
    return (first - 1) if first is not None else latest_cursor()


def latest_cursor() -> int:
    return Event.objects.aggregate(last=Max("id"))["last"] or 0
