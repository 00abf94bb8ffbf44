"""What A2A adds to the trust score (registry.extensions ``TrustSignal``): a verified domain
(the domain served the card, or its owner holds a verified claim to the domain of the
preferred interface) and a verified card signature."""

from urllib.parse import urlsplit

from protocols.a2a.models import CardProvenance
from registry.agents.models import Agent, DomainClaim, Endpoint
from registry.extensions import TrustSignal


def _preferred_hosts(agent_ids: list) -> dict:
    """Each agent's preferred A2A interface's host[:port] (its first A2A endpoint)."""
    hosts: dict = {}
    rows = Endpoint.objects.filter(agent_id__in=agent_ids, protocol=Endpoint.Protocol.A2A)
    for agent_id, address in rows.order_by("agent_id", "position").values_list(
        "agent_id", "address"
    ):
        if agent_id not in hosts:
            try:
                hosts[agent_id] = (urlsplit(address).netloc or "").lower()
            except ValueError:
                hosts[agent_id] = ""
    return hosts


def verified_domain(agent_ids: list) -> dict:
    provenances = dict(
        CardProvenance.objects.filter(agent_id__in=agent_ids)
        .exclude(verified_domain="")
        .values_list("agent_id", "verified_domain")
    )
    hosts = _preferred_hosts([pk for pk in agent_ids if pk not in provenances])
    claimed = set(
        DomainClaim.objects.filter(
            state=DomainClaim.State.VERIFIED, domain__in={h for h in hosts.values() if h}
        ).values_list("domain", "owner")
    )
    owners = dict(Agent.objects.filter(pk__in=list(hosts)).values_list("pk", "owner"))
    values = {}
    for agent_id in agent_ids:
        if agent_id in provenances:
            values[agent_id] = (1.0, {"by": "card", "domain": provenances[agent_id]})
        elif (hosts.get(agent_id), owners.get(agent_id)) in claimed:
            values[agent_id] = (1.0, {"by": "claim", "domain": hosts[agent_id]})
    return values


def signed_card(agent_ids: list) -> dict:
    rows = CardProvenance.objects.filter(agent_id__in=agent_ids).values_list(
        "agent_id", "signature"
    )
    return {
        agent_id: (
            1.0 if signature == CardProvenance.Signature.VERIFIED else 0.0,
            {"signature": signature},
        )
        for agent_id, signature in rows
    }


SIGNALS = [
    TrustSignal(
        "verifiedDomain",
        verified_domain,
        "The agent's domain served its card, or its owner proved the domain by a claim.",
    ),
    TrustSignal("signedCard", signed_card, "The card's signature verified."),
]


def card_digest_keys(agent_ids: list) -> dict:
    """Duplicates' key of a posted or fetched card: its bytes' digest (a generated card's
    names its agent: no key)."""
    from protocols.a2a.cards.documents import cards_stored
    from protocols.a2a.models import CardDocument

    return {
        agent_id: [f"card-digest:{stored.sha256}"]
        for agent_id, stored in cards_stored(agent_ids).items()
        if stored.origin != CardDocument.Origin.GENERATED
    }
