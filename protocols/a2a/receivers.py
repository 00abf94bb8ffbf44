"""The A2A app's receivers: native writes keep card documents current, and every card
write reaches the processes' card caches.

A native agent's card is generated at write time; a card-registered agent's card is
authoritative, so native writes may only change its top-level text (if unsigned).
"""

import hashlib
import json

from django.conf import settings
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils.http import http_date

from protocols.a2a.cards.mapping import card_generate, overlay_problems
from protocols.a2a.cards.selectors import CARDS_CHANNEL, card_cache
from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import AgentIdentity, CardDocument, CardProvenance, CardVersion
from protocols.a2a.registration.provenance import trust_facts_save
from protocols.a2a.registration.services import WRITER, card_facts_save, document_save
from protocols.a2a.relay.queues import queue_names_claim
from protocols.a2a.serving.listing import cards_listed_follow, cards_listed_set
from protocols.a2a.signals import StoredCard, card_stored, cards_stored_send
from protocols.a2a.versions.history import version_record
from registry.agents.models import Agent
from registry.agents.ownership import agent_owner_move
from registry.agents.selectors import agent_queryset
from registry.fastpath.notices import announce
from registry.http.jsonutil import Problem, canonical_dumps
from registry.http.problems import ProblemError
from registry.moderation.blocklist import block_check, block_matching, entries_in_force
from registry.moderation.models import BlockEntry
from registry.signals import (
    agent_changed,
    agent_listing_changed,
    agent_status_changed,
    agents_written,
    domain_claimed,
)

# Changes of a native write that touch what a card says.
CARD_PARTS = {"name", "description", "version", "capabilities", "endpoints:A2A"}


def _card_managed_update(agent: Agent, document: CardDocument, changed: set[str]) -> None:
    """A native change to a card-registered agent: only top-level text, only if unsigned."""
    if changed & {"capabilities", "endpoints:A2A"}:
        raise ProblemError(
            409,
            "card-managed",
            "This agent was registered by its A2A card: its skills and A2A interfaces come "
            f"from the card. Send the new card with PUT /a2a/agents/{agent.id}.",
        )
    fields = changed & {"name", "description", "version"}
    if not fields:
        return
    if document.signed:
        raise ProblemError(
            409,
            "card-managed",
            "This agent's card is signed, so the registry cannot change it. Sign and send the "
            f"new card with PUT /a2a/agents/{agent.id}.",
            [Problem(name, "is fixed by the signed card") for name in sorted(fields)],
        )
    card = json.loads(bytes(document.body))
    for name in fields:
        card[name] = getattr(agent, name)
    errors = card_validate(card).errors
    if errors:
        raise ProblemError(
            400,
            "invalid-card",
            "This change would make the agent's A2A card invalid: "
            f"{errors[0].path} {errors[0].message}.",
            errors,
        )
    document.body = canonical_dumps(card)
    version_record(agent, document.body, change="update")
    document.sha256 = hashlib.sha256(document.body).hexdigest()
    document.save(update_fields=["body", "sha256", "updated_at"])
    # The domain served the card as it was, not as it is now.
    CardProvenance.objects.filter(agent=agent).update(verified_domain="", verified_at=None)
    trust_facts_save(agent, CardProvenance.objects.filter(agent=agent).first())
    cards_stored_send([StoredCard(agent, card)])


def card_generated_refresh(agent: Agent) -> None:
    """Store the generated card of a native agent, or remove it when it has no A2A endpoint."""
    agent = agent_queryset().get(pk=agent.pk)
    base_url = settings.REGISTRY_BASE_URL
    problems = overlay_problems(agent)
    if problems:
        raise ProblemError(
            400, "validation-error", f"{problems[0].path} {problems[0].message}.", problems
        )
    card = card_generate(agent, base_url)
    if card is None:
        CardDocument.objects.filter(agent=agent).delete()
        card_facts_save(agent, None)
        cards_stored_send([StoredCard(agent, None)])
        return
    report = card_validate(card)
    # The registry vouches for its own queue URLs, whatever its base URL's scheme.
    own = {
        f"supportedInterfaces[{index}].url"
        for index, iface in enumerate(card["supportedInterfaces"])
        if iface["url"].startswith(f"{base_url}/a2a/queue/")
    }
    errors = [p for p in report.errors if p.path not in own]
    if errors:
        raise ProblemError(
            400,
            "invalid-card",
            "The A2A card built from this agent would be invalid; fix the A2A endpoint's "
            "address or protocolMetadata.",
            [Problem(f"generatedCard.{p.path}", p.message) for p in errors],
        )
    document_save(
        agent,
        canonical_dumps(card),
        origin=CardDocument.Origin.GENERATED,
        spec_version=report.spec_version or "1.0",
        naming=report.naming,
        signed=False,
    )
    cards_stored_send([StoredCard(agent, card)])


def _identity_move(agent: Agent) -> None:
    """The card's identity (owner + preferred interface) moves with the agent, unless the
    new owner has an agent of that identity already."""
    identity = AgentIdentity.objects.filter(agent=agent).first()
    if identity is None:
        return
    taken = AgentIdentity.objects.filter(owner=agent.owner, preferred_url=identity.preferred_url)
    if taken.exclude(agent=agent).exists():
        raise ProblemError(
            409,
            "duplicate-agent",
            f"{agent.owner} already has an agent with the preferred interface "
            f"{identity.preferred_url}.",
            [Problem("owner", "has an agent with this agent's preferred interface")],
        )
    identity.owner = agent.owner
    identity.save(update_fields=["owner"])


@receiver(agent_changed, dispatch_uid="a2a-queue-claims")
def on_agent_queues_changed(
    sender, agent: Agent, changed: set[str], created: bool = False, **kwargs
) -> None:
    """Relayed endpoints name only queues the agent's owner may use."""
    if changed & {"endpoints", "owner"}:
        queue_names_claim(agent, created=created)


@receiver(agent_changed, dispatch_uid="a2a-card-documents")
def on_agent_changed(
    sender, agent: Agent, changed: set[str], writer: str, created: bool = False, **kwargs
) -> None:
    if created and "endpoints:A2A" not in changed:
        return  # a new agent without A2A interfaces has no card to generate or to remove
    if agent.status == Agent.Status.RETIRED:
        return  # its card is gone for good (410)
    if "owner" in changed and not created:  # a new agent has no identity yet to move
        _identity_move(agent)
    if writer == WRITER or not changed & CARD_PARTS:
        return  # this app's own writes store their documents themselves
    document = CardDocument.objects.filter(agent=agent).first()
    if document is not None and document.origin == CardDocument.Origin.SUBMITTED:
        _card_managed_update(agent, document, changed)
        return
    card_generated_refresh(agent)


@receiver(post_save, sender=CardDocument, dispatch_uid="a2a-card-cache-save")
@receiver(post_delete, sender=CardDocument, dispatch_uid="a2a-card-cache-delete")
def on_card_document_changed(sender, instance: CardDocument, **kwargs) -> None:
    """Every process's card cache forgets the card once this write commits (a notice);
    this process's at once."""
    key = str(instance.agent_id)
    announce(CARDS_CHANNEL, [key])
    card_cache.forget([key])


@receiver(post_delete, sender=CardVersion, dispatch_uid="a2a-card-cache-version-delete")
def on_card_version_deleted(sender, instance: CardVersion, **kwargs) -> None:
    """A pruned version leaves every process's card cache too."""
    key = f"{instance.agent_id}@{instance.seq}"
    announce(CARDS_CHANNEL, [key])
    card_cache.forget([key])


def lifecycle_headers(agent: Agent) -> str:
    """A deprecated agent's card headers: Deprecation (RFC 9745), Sunset (RFC 8594) and
    the successor's card as a Link, tab-separated (protocols.a2a.serving.cards reads them)."""
    if agent.status != Agent.Status.DEPRECATED:
        return ""
    headers = [f"Deprecation: @{int(agent.status_changed_at.timestamp())}"]
    if agent.sunset_at is not None:
        headers.append(f"Sunset: {http_date(agent.sunset_at.timestamp())}")
    if agent.successor is not None:
        successor = f"{settings.REGISTRY_BASE_URL}/a2a/agents/{agent.successor}"
        headers.append(f'Link: <{successor}>; rel="successor-version"')
    return "\t".join(headers)


@receiver(agent_status_changed, dispatch_uid="a2a-card-lifecycle")
def on_agent_status_changed(sender, agent: Agent, status: str, **kwargs) -> None:
    """A retired agent's card is no longer served (410; its versions stay) and its card
    identity is free for a new registration; a deprecated one's carries the headers."""
    if status == Agent.Status.RETIRED:
        CardDocument.objects.filter(agent=agent).delete()
        AgentIdentity.objects.filter(agent=agent).delete()
        card_facts_save(agent, None)
        cards_stored_send([StoredCard(agent, None)])
        return
    document = CardDocument.objects.filter(agent=agent).first()
    if document is not None:
        document.lifecycle_headers = lifecycle_headers(agent)
        document.save(update_fields=["lifecycle_headers", "updated_at"])


@receiver(domain_claimed, dispatch_uid="a2a-domain-claimed")
def on_domain_claimed(sender, domain: str, owner: str, **kwargs) -> int:
    """Every agent whose card the claimed domain served (or was fetched from it) goes to the
    domain's owner."""
    moved = 0
    served = Q(verified_domain=domain) | Q(source_url__startswith=f"https://{domain}/")
    taken = CardProvenance.objects.filter(served).exclude(agent__owner=owner)
    taken = taken.exclude(agent__status=Agent.Status.RETIRED)
    for agent in Agent.objects.filter(pk__in=taken.values("agent_id")).order_by("pk"):
        agent_owner_move(agent=agent, owner=owner, reason="domain-claim")
        moved += 1
    return moved


@receiver(agent_listing_changed, dispatch_uid="a2a-card-listing")
def on_agent_listing_changed(sender, agent: Agent, listed: bool, **kwargs) -> None:
    """An unlisted agent's card and versions are not served (its owner reads them through
    the API); listed again, they are."""
    cards_listed_set(agent, listed)


@receiver(agents_written, dispatch_uid="a2a-card-listing-follow")
def on_agents_written(sender, agent_ids, **kwargs) -> None:
    """A card stored for an agent that is not listed is not served."""
    cards_listed_follow(agent_ids)


@receiver(card_stored, dispatch_uid="a2a-card-blocklist")
def on_card_stored_blocked(sender, cards: list[StoredCard], **kwargs) -> None:
    """A card whose digest the blocklist names is refused (422 blocked), on every path."""
    if not any(e.kind == BlockEntry.Kind.DIGEST for e in entries_in_force()):
        return
    ids = [stored.agent.pk for stored in cards if stored.card is not None]
    for digest in CardDocument.objects.filter(agent_id__in=ids).values_list("sha256", flat=True):
        block_check(digest=digest)


@receiver(block_matching, dispatch_uid="a2a-block-matching")
def on_block_matching(sender, kind: str, value: str, **kwargs):
    """The agents whose served card has the blocked digest."""
    if kind != BlockEntry.Kind.DIGEST:
        return None
    return list(CardDocument.objects.filter(sha256=value).values_list("agent_id", flat=True))
