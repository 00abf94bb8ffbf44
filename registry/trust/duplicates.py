"""Duplicates: the same agent listed more than once (the same card digest, the same preferred
interface URL, an entity's domain, under other owners) is grouped at write time. Each agent's
keys (``DuplicateKey``, from the registered key sources) are kept with its writes; agents of
two owners or more that share a key are one group, and each copy names the group's
canonical copy in ``Agent.duplicate_of``: a domain proved by a claim first, then a verified
domain, then the oldest. Discovery, the catalog and the pages show canonical copies only."""

import uuid
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.db.models import Q
from django.utils import timezone

from registry import extensions
from registry.agents.models import Agent, Endpoint
from registry.semantic.models import AgentVector
from registry.trust.models import DuplicateKey

KEY_CHARS = 300
# The agents regrouped by one write at the most (a key shared by more is a common one: a
# shared gateway URL; its agents keep what they had).
GROUP_MAX = 1000


def _interface(address: str) -> str | None:
    try:
        parts = urlsplit(address.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"interface:{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def interface_keys(agent_ids: list) -> dict:
    """The core's key: each agent's preferred interface (its first endpoint's URL)."""
    first: dict = {}
    rows = Endpoint.objects.filter(agent_id__in=agent_ids).order_by("agent_id", "position", "id")
    for agent_id, address in rows.values_list("agent_id", "address"):
        first.setdefault(agent_id, address)
    keys = {}
    for agent_id, address in first.items():
        key = _interface(address)
        if key is not None:
            keys[agent_id] = [key]
    return keys


def _keys_of(agent_ids: list) -> dict[uuid.UUID, set[str]]:
    found: dict = {pk: set() for pk in agent_ids}
    for source in extensions.duplicate_keys.read():
        for agent_id, keys in source(agent_ids).items():
            if agent_id in found:
                found[agent_id].update(key[:KEY_CHARS] for key in keys if key)
    return found


def _rank(row: dict) -> tuple:
    """The canonical copy first: a domain proved by a claim, then a verified domain (by
    its card, or an entity's domain card), then the oldest."""
    signals = row["trust_signals"] or {}
    domain = signals.get("verifiedDomain") or {}
    entity = signals.get("entityLevel") or {}
    if domain.get("by") == "claim":
        proof = 0
    elif domain.get("value") == 1.0 or (entity.get("value") or 0) >= 0.5:
        proof = 1
    else:
        proof = 2
    return (proof, row["created_at"], str(row["pk"]))


def duplicates_regroup(agent_ids: Iterable) -> list[uuid.UUID]:
    """Keep the written agents' keys and regroup what they touch (inside the write's
    transaction, after their trust scores); returns the agents whose ``duplicate_of``
    changed."""
    written = list(dict.fromkeys(agent_ids))
    if not written:
        return []
    alive = list(
        Agent.objects.filter(pk__in=written)
        .exclude(status=Agent.Status.RETIRED)
        .values_list("pk", flat=True)
    )
    old = set(DuplicateKey.objects.filter(agent_id__in=written).values_list("key", flat=True))
    keys = _keys_of(alive)
    DuplicateKey.objects.filter(agent_id__in=written).delete()
    DuplicateKey.objects.bulk_create(
        DuplicateKey(agent_id=pk, key=key) for pk, found in keys.items() for key in found
    )
    touched = old | {key for found in keys.values() for key in found}
    sharing = (
        DuplicateKey.objects.filter(key__in=touched)
        .order_by()
        .values_list("agent_id", flat=True)
        .distinct()[: GROUP_MAX + 1]
    )
    affected = set(written) | set(sharing)
    affected |= set(
        Agent.objects.filter(Q(duplicate_of__in=written) | Q(pk__in=written)).values_list(
            "pk", flat=True
        )[:GROUP_MAX]
    )
    if len(affected) > GROUP_MAX:
        affected = set(written)
    return _groups_write(affected)


def _groups_write(affected: set) -> list[uuid.UUID]:
    rows = {
        row["pk"]: row
        for row in Agent.objects.filter(pk__in=list(affected)).values(
            "pk", "owner", "status", "created_at", "trust_signals", "duplicate_of"
        )
    }
    parent = {pk: pk for pk in rows}

    def find(pk):
        while parent[pk] != pk:
            parent[pk] = parent[parent[pk]]
            pk = parent[pk]
        return pk

    by_key: dict = {}
    for agent_id, key in DuplicateKey.objects.filter(agent_id__in=list(rows)).values_list(
        "agent_id", "key"
    ):
        if rows[agent_id]["status"] != Agent.Status.RETIRED:
            by_key.setdefault(key, []).append(agent_id)
    for members in by_key.values():
        if len(members) > 1 and len({rows[pk]["owner"] for pk in members}) > 1:
            for pk in members[1:]:
                parent[find(pk)] = find(members[0])
    groups: dict = {}
    for pk in rows:
        groups.setdefault(find(pk), []).append(pk)
    wanted: dict = {}
    for members in groups.values():
        canonical = min((rows[pk] for pk in members), key=_rank)["pk"]
        for pk in members:
            wanted[pk] = None if pk == canonical or len(members) == 1 else canonical
    changed = [
        Agent(pk=pk, duplicate_of=wanted[pk])
        for pk, row in rows.items()
        if row["duplicate_of"] != wanted[pk]
    ]
    # The triggers keep the copies out of the search rows and filter keys that the lean
    # lane reads (migration 0038); the vectors written anew, the index reads their mark.
    Agent.objects.bulk_update(changed, ["duplicate_of"], batch_size=500)
    ids = [agent.pk for agent in changed]
    if ids:
        AgentVector.objects.filter(agent_id__in=ids).update(updated_at=timezone.now())
    return ids
