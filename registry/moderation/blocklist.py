"""The blocklist: entries that refuse writes on every path (a receiver of ``agent_changed``,
and ``block_check`` for what only an app knows: a card's digest) with a 422 ``blocked``
naming the entry's reason, never its pattern; and, once an entry is added, the agents it
matches quarantined in a job (``block_apply``: the apps name the agents of a kind they
keep, a card's digest, through ``block_matching``).

Each process keeps the entries while the shared cache's stamp of them stays the same
(``registry.moderation.stamps``): a change reaches every process once it commits; a write
that committed just before it is quarantined by the entry's job."""

import uuid
from collections.abc import Iterable
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from registry.access.audit import audit_actor, audit_record
from registry.agents.models import Agent, Endpoint
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.moderation.models import BlockEntry
from registry.moderation.services import agent_quarantine
from registry.moderation.stamps import Kept, stamp_renew
from registry.outbound.hosts import InvalidHost, domain_parse
from registry.signals import moderation_noted

# Sent by ``block_apply`` with ``kind`` and ``value``: an app answers the ids of the agents
# matching an entry of a kind only it knows (a2a: "digest", its cards' SHA-256), or None.
block_matching = Signal()

STAMP = "blocklist"
_kept = Kept(STAMP, lambda: list(BlockEntry.objects.all()[:10000]))


def entries_in_force() -> list[BlockEntry]:
    now = timezone.now()
    return [e for e in _kept.get() if e.expires_at is None or e.expires_at > now]


def entries_forget() -> None:
    """This process reads the entries again."""
    _kept.forget()


def entries_changed() -> None:
    """Every process reads them again: this one now, the others once the write commits."""
    _kept.forget()
    stamp_renew(STAMP)


def value_clean(kind: str, value: str) -> str:
    """The entry's value as it is matched: hosts and domains as IDNA A-labels, digests in
    lower-case hex; raises ValueError with what is wrong."""
    value = value.strip()
    if kind in (BlockEntry.Kind.DOMAIN, BlockEntry.Kind.HOST):
        try:
            return domain_parse(value).host
        except InvalidHost as exc:
            raise ValueError(str(exc)) from None
    if kind == BlockEntry.Kind.URL_PREFIX:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https", "amqp", "amqps") or not parts.hostname:
            raise ValueError("must be a URL with a scheme and a host, e.g. https://host/path")
        return value
    if kind == BlockEntry.Kind.DIGEST:
        digest = value.lower().removeprefix("sha256:")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError("must be a SHA-256 in hex (64 characters)")
        return digest
    if not value:
        raise ValueError("must not be empty")
    return value


def _host(address: str) -> str | None:
    try:
        return urlsplit(address).hostname
    except ValueError:
        return None


def address_entry(address: str, entries: list[BlockEntry]) -> BlockEntry | None:
    host = _host(address)
    for entry in entries:
        kind, value = entry.kind, entry.value
        if kind == BlockEntry.Kind.URL_PREFIX and address.startswith(value):
            return entry
        if host and kind == BlockEntry.Kind.HOST and host == value:
            return entry
        if (
            host
            and kind == BlockEntry.Kind.DOMAIN
            and (host == value or host.endswith("." + value))
        ):
            return entry
    return None


def _refused(entry: BlockEntry, path: str) -> ProblemError:
    return ProblemError(
        422,
        "blocked",
        f"The registry refuses this: {entry.reason}",
        [Problem(path, f"is refused: {entry.reason}")],
        reason=entry.reason,
    )


def block_check(
    *, owner: str | None = None, addresses: Iterable[str] = (), digest: str | None = None
) -> None:
    """Raise 422 ``blocked`` when an entry in force matches the owner, one of the
    addresses (``endpoints[i].address``) or the card's digest."""
    entries = entries_in_force()
    if not entries:
        return
    for entry in entries:
        if owner is not None and entry.kind == BlockEntry.Kind.OWNER and entry.value == owner:
            raise _refused(entry, "owner")
        if digest is not None and entry.kind == BlockEntry.Kind.DIGEST and entry.value == digest:
            raise _refused(entry, "card")
    for index, address in enumerate(addresses):
        entry = address_entry(address, entries)
        if entry is not None:
            raise _refused(entry, f"endpoints[{index}].address")


def on_agent_changed(sender, agent: Agent, changed: set, **kwargs) -> None:
    """Every write of an agent (receiver of ``agent_changed``): its owner and endpoints."""
    if not entries_in_force() or not changed & {"owner", "endpoints"}:
        return
    addresses = [e.address for e in agent.endpoints.all()]
    block_check(owner=agent.owner, addresses=addresses)


@transaction.atomic
def block_add(*, kind: str, value: str, reason: str, expires_at=None) -> BlockEntry:
    """A new entry (audited); its retroactive quarantine is queued once it commits."""
    actor = audit_actor.get()
    entry = BlockEntry.objects.create(
        kind=kind,
        value=value_clean(kind, value),
        reason=reason,
        expires_at=expires_at,
        created_by=actor[0] if actor else "system",
    )
    audit_record(
        "blocklist.add",
        object_repr=f"{kind} entry",
        after={"id": str(entry.id), "kind": kind, "value": entry.value, "reason": reason},
    )
    entries_changed()
    data = {
        "id": str(entry.id),
        "kind": kind,
        "value": entry.value,
        "reason": reason,
        "expiresAt": expires_at.isoformat() if expires_at else None,
    }
    moderation_noted.send(sender=BlockEntry, type="blocklist.added", data=data)
    transaction.on_commit(lambda: _apply_later(entry.id))
    return entry


def _apply_later(entry_id: uuid.UUID) -> None:
    # By name: the task's module imports this one (registered by RegistryConfig.ready()).
    current_app.tasks["registry.moderation.tasks.blocklist_apply"].delay(str(entry_id))


@transaction.atomic
def block_remove(*, entry: BlockEntry) -> None:
    """Remove an entry (audited); what it quarantined stays so until a moderator releases it."""
    audit_record(
        "blocklist.remove",
        object_repr=f"{entry.kind} entry",
        before={"id": str(entry.id), "kind": entry.kind, "value": entry.value},
    )
    data = {"id": str(entry.id), "kind": entry.kind, "value": entry.value}
    entry.delete()
    entries_changed()
    moderation_noted.send(sender=BlockEntry, type="blocklist.removed", data=data)


def matching_agents(entry: BlockEntry) -> list[uuid.UUID]:
    """The ids of the listed agents the entry matches, at most BLOCKLIST_QUARANTINE_MAX."""
    most = settings.BLOCKLIST_QUARANTINE_MAX
    agents = Agent.objects.filter(listed=True).exclude(status=Agent.Status.RETIRED)
    kind, value = entry.kind, entry.value
    if kind == BlockEntry.Kind.OWNER:
        return list(agents.filter(owner=value).values_list("pk", flat=True)[:most])
    if kind == BlockEntry.Kind.DIGEST:
        ids = set()
        for _, found in block_matching.send(sender=BlockEntry, kind=kind, value=value):
            ids |= set(found or ())
        return list(agents.filter(pk__in=ids).values_list("pk", flat=True)[:most])
    if kind == BlockEntry.Kind.URL_PREFIX:
        endpoints = Endpoint.objects.filter(address__startswith=value)
    else:  # a host's or a domain's endpoints, their addresses read back to be sure
        host = value.replace(".", r"\.")
        sub = r"([^/@]*\.)?" if kind == BlockEntry.Kind.DOMAIN else ""
        endpoints = Endpoint.objects.filter(address__iregex=rf"^[a-z+]+://{sub}{host}(:|/|$)")
    found = endpoints.filter(agent__in=agents).values_list("agent_id", flat=True).distinct()
    return list(found[:most])


def block_apply(entry: BlockEntry) -> int:
    """Quarantine every listed agent the entry matches (each audited and announced); the
    count, stored on the entry."""
    ids = matching_agents(entry)
    audit_actor.set((f"blocklist:{entry.created_by}"[:200], ""))
    for agent in Agent.objects.filter(pk__in=ids).order_by("pk"):
        agent_quarantine(agent=agent, reason=f"Blocked: {entry.reason}")
    BlockEntry.objects.filter(pk=entry.pk).update(quarantined=len(ids))
    return len(ids)
