"""Keeping the trust scores: ``trust_recompute`` measures some agents' signals and writes
the scores and signals that changed, with their score-band facts; its callers rebuild what
reads show of those agents (``agents_written``). Never called by a read."""

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from registry.agents.models import Agent
from registry.discovery.models import AgentFacet
from registry.fastpath.copy import objects_update
from registry.http.jsonutil import json_stored_order
from registry.signals import agents_written_send, dispatch_shared
from registry.trust.duplicates import duplicates_regroup
from registry.trust.measures import reads_shared
from registry.trust.scoring import band_of, score_of, weighted_signals

BAND_KIND = "trustBand"
CHUNK = 1000
# The agents whose score this context just wrote: the agents_written it sends for them
# does not measure them again.
_fresh: ContextVar[frozenset] = ContextVar("trust_fresh", default=frozenset())


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 3)


def signals_measure(agent_ids: list) -> dict[uuid.UUID, dict[str, dict]]:
    """Each agent's signals: {name: {"value": v, "weight": w, …what was seen}}."""
    measured = {agent_id: {} for agent_id in agent_ids}
    with reads_shared():
        for signal, weight in weighted_signals():
            found = signal.values(agent_ids)
            for agent_id, entries in measured.items():
                value, detail = found.get(agent_id, (signal.missing, {}))
                entries[signal.name] = {"value": _rounded(value), "weight": weight, **detail}
    # As jsonb keeps them: the instances a bulk write offered read as a read gives them.
    return {agent_id: json_stored_order(entries) for agent_id, entries in measured.items()}


def trust_recompute(agent_ids: Iterable, *, now: datetime | None = None) -> list[uuid.UUID]:
    """Measure the agents' signals and write the scores, signals and bands that changed
    (inside the caller's transaction, or one of its own); returns the agents written."""
    now = now or timezone.now()
    ids = list(dict.fromkeys(agent_ids))
    written = []
    with transaction.atomic():
        for start in range(0, len(ids), CHUNK):
            written.extend(_recompute_chunk(ids[start : start + CHUNK], now))
    return written


def _recompute_chunk(ids: list, now: datetime) -> list[uuid.UUID]:
    stored = {
        pk: (score, signals)
        for pk, score, signals in Agent.objects.filter(pk__in=ids).values_list(
            "pk", "trust_score", "trust_signals"
        )
    }
    if not stored:
        return []
    changed, bands = [], []
    for agent_id, signals in signals_measure(list(stored)).items():
        score = score_of(signals)
        old_score, old_signals = stored[agent_id]
        if score == old_score and _values(signals) == _values(old_signals):
            continue  # what was seen moved (a probe more), not what it weighs: no write
        changed.append(
            Agent(pk=agent_id, trust_score=score, trust_signals=signals, trust_changed_at=now)
        )
        if band_of(score) != band_of(old_score) or not old_signals:
            bands.append((agent_id, band_of(score)))
    fields = ["trust_score", "trust_signals", "trust_changed_at"]
    objects_update(changed, fields)
    if bands:
        AgentFacet.objects.filter(agent_id__in=[pk for pk, _ in bands], kind=BAND_KIND).delete()
        AgentFacet.objects.bulk_create(
            AgentFacet(agent_id=pk, kind=BAND_KIND, value=band) for pk, band in bands
        )
    _instances_refresh({agent.pk: agent for agent in changed}, fields)
    return [agent.pk for agent in changed]


def _values(signals: dict) -> dict:
    """What a change of signals is judged by: each one's weight and value to two decimals
    (a probe more moves a share by less; the details are written with the next change)."""
    return {
        name: (
            entry.get("weight"),
            None if entry.get("value") is None else round(entry["value"], 2),
        )
        for name, entry in (signals or {}).items()
        if isinstance(entry, dict)
    }


def _instances_refresh(changed: dict, fields: list[str]) -> None:
    """The instances the receivers of the ``agents_written`` being sent share (a bulk
    write's, registry.signals) take the values just written."""
    shared = dispatch_shared()
    if shared is None or not changed:
        return
    for pool in (shared["offered"], shared["read"]):
        for pk, fresh in changed.items():
            instance = pool.get(pk)
            if instance is not None:
                for name in fields:
                    setattr(instance, name, getattr(fresh, name))


@contextmanager
def _written_fresh(ids: list) -> Iterator[None]:
    token = _fresh.set(_fresh.get() | frozenset(ids))
    try:
        yield
    finally:
        _fresh.reset(token)


def trust_on_agents_written(sender, agent_ids, **kwargs) -> None:
    """A write changed these agents: their scores follow, then their duplicate groups,
    before discovery builds their listings (connected first, registry/apps.py); the other
    agents whose group changed are written too."""
    fresh = _fresh.get()
    written = [pk for pk in agent_ids if pk not in fresh]
    if not written:
        return
    trust_recompute(written)
    regrouped = duplicates_regroup(written)
    if regrouped:
        _instances_refresh(
            Agent.objects.filter(pk__in=regrouped).only("duplicate_of").in_bulk(),
            ["duplicate_of"],
        )
    others = sorted(set(regrouped) - set(written), key=str)
    if others:
        with _written_fresh(others):
            agents_written_send(others)


def trust_rescore(agent_ids: Iterable) -> list[uuid.UUID]:
    """Recompute the agents' scores after what a write of theirs does not send (probes, the
    daily refresh), and rebuild what reads show of those whose score changed."""
    with transaction.atomic():
        written = trust_recompute(agent_ids)
        with _written_fresh(written):
            agents_written_send(written)
    return written


def trust_on_probes_written(sender, agent_ids, **kwargs) -> None:
    trust_rescore(agent_ids)


def trust_refresh_all(*, batch: int = CHUNK) -> tuple[int, int]:
    """Every agent's score recomputed (but the retired ones'), a batch a transaction;
    returns (agents measured, agents whose score or signals changed)."""
    agents = Agent.objects.exclude(status=Agent.Status.RETIRED).order_by("pk")
    measured = changed = 0
    after = None
    while True:
        page = agents if after is None else agents.filter(pk__gt=after)
        ids = list(page.values_list("pk", flat=True)[:batch])
        if not ids:
            return measured, changed
        measured += len(ids)
        changed += len(trust_rescore(ids))
        after = ids[-1]
