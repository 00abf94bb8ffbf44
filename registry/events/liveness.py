"""``endpoint.liveness_changed``: an event for each change of an endpoint's status (live,
stale, down, unknown), never one per heartbeat. The status last announced is kept
(``EndpointStatusSeen``); a change is the status now differing from it.

Status moves with writes and with time:
- a write that may change it (a heartbeat that revives an endpoint, a probe's outcome)
  sends ``endpoints_liveness_written`` in its transaction, and the change's event is
  written in that same transaction (``on_endpoints_liveness_written``);
- a grace that runs out changes it with no write at all: the stream server's watcher
  (``registry.events.asgi``) looks every ``EVENTS_LIVENESS_WATCH_SECONDS`` (1) for the
  endpoints whose ``alive_until`` passed since its last look (an index range, not a scan:
  ``expiries_write``), so the event follows the expiry within about a second, whatever the
  scheduler's period;
- the sweep (``registry.events.tasks.events_sweep``, every ``EVENTS_SWEEP_SECONDS``)
  compares every endpoint, catching whatever the two others missed (the stream server was
  down; an endpoint registered live).
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Case, CharField, F, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from registry.agents.liveness_state import DOWN, LIVE, STALE, UNKNOWN
from registry.agents.models import Agent, Endpoint
from registry.events import envelope
from registry.events.models import EndpointStatusSeen
from registry.events.outbox import agent_events_write

# The watcher looks this far back before its last look too: an expiry written by a
# transaction that committed late is still seen (the announced status dedupes).
WATCH_OVERLAP = timedelta(seconds=5)


def _status_now(now) -> Case:
    """registry.agents.liveness_state.endpoint_status, in SQL."""
    return Case(
        When(alive_until__gt=now, then=Value(LIVE)),
        When(last_probe_ok=False, then=Value(DOWN)),
        When(alive_until__isnull=True, then=Value(UNKNOWN)),
        default=Value(STALE),
        output_field=CharField(),
    )


@transaction.atomic(savepoint=False)
def liveness_changes_write(endpoint_ids=None, *, skip_locked: bool = False) -> int:
    """Write an event for each endpoint (of these, or every one) whose status changed since
    it was last announced; returns how many. ``skip_locked``: leave out the endpoints a
    write holds (the watcher: that write announces their change itself)."""
    endpoints = Endpoint.objects.all()
    if endpoint_ids is not None:
        ids = sorted(set(endpoint_ids))
        if not ids:
            return 0
        # Locked (in one order): two writers of the same endpoints announce a change once.
        locked = Endpoint.objects.filter(pk__in=ids).select_for_update(skip_locked=skip_locked)
        endpoints = endpoints.filter(
            pk__in=list(locked.order_by("pk").values_list("pk", flat=True))
        )
    now = timezone.now()
    seen = EndpointStatusSeen.objects.filter(endpoint=OuterRef("pk")).values("status")[:1]
    changed = list(
        endpoints.annotate(
            now_status=_status_now(now), seen_status=Coalesce(Subquery(seen), Value(UNKNOWN))
        )
        .exclude(now_status=F("seen_status"))
        .exclude(agent__status=Agent.Status.RETIRED)  # in the feed as deleted: no more news
        .order_by("pk")
        .values_list("id", "agent_id", "now_status")
    )
    if not changed:
        return 0
    EndpointStatusSeen.objects.bulk_create(
        [EndpointStatusSeen(endpoint_id=e, status=s) for e, _, s in changed],
        update_conflicts=True,
        unique_fields=["endpoint"],
        update_fields=["status"],
    )
    changes: dict = {}
    for endpoint_id, agent_id, status in changed:
        entry = changes.setdefault(agent_id, {"created": False, "changed": set(), "types": []})
        extensions = {"endpointid": str(endpoint_id), "liveness": status}
        entry["types"].append((envelope.LIVENESS_CHANGED, extensions))
    return agent_events_write(changes)


def expiries_write(since: datetime | None, now: datetime) -> int:
    """The status changes of the endpoints whose ``alive_until`` fell in (``since``, ``now``]
    (``since`` None: every endpoint); returns how many events were written."""
    if since is None:
        return liveness_changes_write()
    expired = list(
        Endpoint.objects.filter(
            alive_until__gt=since - WATCH_OVERLAP, alive_until__lte=now
        ).values_list("pk", flat=True)
    )
    return liveness_changes_write(expired, skip_locked=True) if expired else 0


def on_endpoints_liveness_written(sender, endpoint_ids, **kwargs) -> None:
    """Receiver of endpoints_liveness_written: the changes, in the write's transaction."""
    liveness_changes_write(endpoint_ids)
