"""Verified publishers: owners, and domains with their subdomains, that the moderators
verified (``VerifiedPublisher``). Their agents carry ``trust.verifiedPublisher`` (the
agent's ``Moderation.verified_publisher``, read with it), the ``verifiedPublisher`` fact
(a discovery filter and facet), skip admission review, and their names are protected from
look-alikes (the ``confusable-name`` rule). Kept at write time: an agent's write (its owner
or endpoints) and a publisher's verification, which refreshes its agents."""

from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from registry.access.audit import audit_actor, audit_record
from registry.agents.models import Agent, Endpoint
from registry.discovery.facts import agent_facts_set
from registry.moderation import rules
from registry.moderation.models import Moderation, VerifiedPublisher
from registry.moderation.stamps import Kept, stamp_renew
from registry.signals import agents_written_send, moderation_noted

FACT = "verifiedPublisher"
STAMP = "publishers"


def _load() -> dict:
    rows = list(VerifiedPublisher.objects.values_list("kind", "value")[:10000])
    names = Agent.objects.filter(moderation__verified_publisher=True, listed=True)
    return {
        "owners": {v for k, v in rows if k == VerifiedPublisher.Kind.OWNER},
        "domains": {v for k, v in rows if k == VerifiedPublisher.Kind.DOMAIN},
        "names": {
            rules.skeleton(name): name
            for name in names.values_list("name", flat=True)[:5000]
            if rules.skeleton(name)
        },
    }


_kept = Kept(STAMP, _load)


def _read() -> dict:
    return _kept.get()


def publishers_forget() -> None:
    """This process reads the publishers again."""
    _kept.forget()


def publishers_changed() -> None:
    """Every process reads them again: this one now, the others once the write commits."""
    _kept.forget()
    stamp_renew(STAMP)


def protected_names() -> dict:
    """{skeleton: name} of the verified publishers' listed agents (the confusable rule)."""
    return _read()["names"]


def _on_domain(host: str, domains: set) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


def owner_verified(agent: Agent) -> bool:
    """Whether the agent is a verified publisher's: its owner, or an endpoint's domain."""
    known = _read()
    if agent.owner in known["owners"]:
        return True
    if not known["domains"]:
        return False
    for endpoint in agent.endpoints.all():
        try:
            host = urlsplit(endpoint.address).hostname
        except ValueError:
            continue
        if host and _on_domain(host, known["domains"]):
            return True
    return False


def agent_publisher_refresh(agent: Agent, *, created: bool = False) -> bool:
    """The agent's mark and fact as its owner and endpoints say now; whether it changed."""
    verified = owner_verified(agent)
    if created and not verified:
        return False  # nothing stored yet to clear
    current = Moderation.objects.filter(agent=agent).values_list("verified_publisher", flat=True)
    if (current.first() or False) == verified:
        return False
    Moderation.objects.update_or_create(agent=agent, defaults={"verified_publisher": verified})
    agent_facts_set(agent=agent, kinds={FACT}, facts={(FACT, "true")} if verified else ())
    return True


def on_agent_changed(sender, agent: Agent, changed: set, created: bool = False, **kwargs):
    """Receiver of ``agent_changed``: a new owner or endpoints may make it one's or not; a
    verified publisher's renamed agent changes the protected names."""
    if (changed & {"owner", "endpoints"} and agent_publisher_refresh(agent, created=created)) or (
        "name" in changed and not created and owner_verified(agent)
    ):
        publishers_changed()


def _agents_of(kind: str, value: str):
    if kind == VerifiedPublisher.Kind.OWNER:
        return Agent.objects.filter(owner=value)
    host = value.replace(".", r"\.")
    endpoints = Endpoint.objects.filter(address__iregex=rf"^[a-z+]+://([^/@]*\.)?{host}(:|/|$)")
    mark = Q(moderation__verified_publisher=True)
    return Agent.objects.filter(Q(pk__in=endpoints.values("agent_id")) | mark)


def _refresh_all(kind: str, value: str) -> int:
    publishers_changed()
    changed = []
    most = settings.BLOCKLIST_QUARANTINE_MAX
    for agent in _agents_of(kind, value).distinct().order_by("pk")[:most]:
        if agent_publisher_refresh(agent):
            changed.append(agent.pk)
    agents_written_send(changed)
    publishers_changed()
    return len(changed)


@transaction.atomic
def publisher_verify(*, kind: str, value: str, reason: str) -> tuple[VerifiedPublisher, int]:
    """Mark an owner or domain verified (again: the reason is replaced); audited; its
    agents marked. Returns the entry and how many agents it marked."""
    actor = audit_actor.get()
    entry, _ = VerifiedPublisher.objects.update_or_create(
        kind=kind,
        value=value,
        defaults={"reason": reason, "created_by": actor[0] if actor else "system"},
    )
    marked = _refresh_all(kind, value)
    audit_record("publisher.verify", object_repr=f"{kind} {value}"[:200], after={"reason": reason})
    data = {"kind": kind, "value": value, "reason": reason, "agents": marked}
    moderation_noted.send(sender=VerifiedPublisher, type="publisher.verified", data=data)
    return entry, marked


@transaction.atomic
def publisher_unverify(*, entry: VerifiedPublisher) -> int:
    kind, value = entry.kind, entry.value
    entry.delete()
    unmarked = _refresh_all(kind, value)
    audit_record("publisher.unverify", object_repr=f"{kind} {value}"[:200])
    data = {"kind": kind, "value": value, "agents": unmarked}
    moderation_noted.send(sender=VerifiedPublisher, type="publisher.unverified", data=data)
    return unmarked


def publisher_badge(agent: Agent) -> str | None:
    """The pages' badge of a verified publisher's agent (its moderation row, read with it)."""
    try:
        return "Verified publisher" if agent.moderation.verified_publisher else None
    except Moderation.DoesNotExist:
        return None
