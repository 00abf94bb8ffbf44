"""``endpoint.liveness_changed``: an endpoint's status (live, stale, down, unknown) moves
with time as well as with writes (a heartbeat's grace runs out with no write at all), so a
sweep compares each endpoint's status now with the one last announced
(``EndpointStatusSeen``) and writes an event for each change only: never one per
heartbeat. It runs every ``EVENTS_SWEEP_SECONDS`` (``registry.events.tasks.events_sweep``)."""

from django.db import transaction
from django.db.models import Case, CharField, F, OuterRef, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from registry.agents.liveness_state import DOWN, LIVE, STALE, UNKNOWN
from registry.agents.models import Agent, Endpoint
from registry.events import envelope
from registry.events.models import EndpointStatusSeen
from registry.events.outbox import agent_events_write


def _status_now(now) -> Case:
    """registry.agents.liveness_state.endpoint_status, in SQL."""
    return Case(
        When(alive_until__gt=now, then=Value(LIVE)),
        When(last_probe_ok=False, then=Value(DOWN)),
        When(alive_until__isnull=True, then=Value(UNKNOWN)),
        default=Value(STALE),
        output_field=CharField(),
    )


@transaction.atomic
def liveness_changes_write() -> int:
    """Write an event for each endpoint whose status changed since it was last announced;
    returns how many."""
    now = timezone.now()
    seen = EndpointStatusSeen.objects.filter(endpoint=OuterRef("pk")).values("status")[:1]
    changed = list(
        Endpoint.objects.annotate(
            now_status=_status_now(now), seen_status=Coalesce(Subquery(seen), Value(UNKNOWN))
        )
        .exclude(now_status=F("seen_status"))
        .exclude(agent__status=Agent.Status.RETIRED)  # in the feed as deleted: no more news
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
