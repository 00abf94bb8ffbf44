"""Server names in the MCP Registry API: an entity whose own card at its domain lists its
servers (verification level 1 or 2) names them in that domain's namespace, any other in the
registry's; names are unique (a later server that would take one gets its endpoint id's
first digits) and stay with their server; a name a server no longer goes by redirects to
the one it has now. Every answer valid against the official OpenAPI and server.json."""

import copy
import json
from urllib.parse import quote

import pytest
from django.core.management import call_command

from protocols.entities.demo import DEMO_CARDS
from protocols.mcp.models import ServerVersion
from tests.protocols.mcp.official import (
    errors,
    openapi_validator,
    server_card_validator,
    server_json_validator,
)

pytestmark = [pytest.mark.django_db, pytest.mark.apps("entities")]
OFFICIAL = "io.modelcontextprotocol.registry/official"
DOMAIN = "tables.example.com"


def listed(client, **params) -> dict[str, dict]:
    """The servers of /v0.1/servers (each checked against the official schemas) by name."""
    response = client.get("/v0.1/servers", params)
    assert response.status_code == 200, response.content
    document = json.loads(response.content)
    assert errors(openapi_validator("ServerList"), document) == []
    for item in document["servers"]:
        assert errors(server_json_validator(), item["server"]) == []
    return {item["server"]["name"]: item for item in document["servers"]}


def branches_card(*names: str) -> dict:
    """An EDP 0.2 card of DOMAIN with one entity per name, each at a path of its own, each
    with its MCP server."""
    return {
        "schema_version": "0.2.0",
        "domain": DOMAIN,
        "entities": [
            {
                "name": name,
                "path": f"/branch-{index}",
                "location": {"city": "Paris", "country": "FR"},
                "mcps": [
                    {
                        "provider": "tables-host",
                        "endpoint": f"https://mcp{index}.tables.example.com/mcp",
                        "capabilities": ["reservations"],
                    }
                ],
            }
            for index, name in enumerate(names)
        ],
    }


def card_store(owner: str, card: dict):
    """Store a card as a crawl of its domain does (one card, one by one: not the bulk path)."""
    from protocols.entities.cards.validation import card_validate
    from protocols.entities.registration.services import card_store as store

    report = card_validate(card, host=DOMAIN)
    assert report.ok, report.errors
    body = json.dumps(card).encode()
    url = f"https://{DOMAIN}/.well-known/entity-card.json"
    return store(owner=owner, authority=DOMAIN, url=url, body=body, report=report)


def test_an_entity_of_a_verified_domain_names_its_servers_in_that_domain(anon):
    from protocols.entities.registration.bulk import cards_bulk_store

    cards_bulk_store(owner="alice", cards=DEMO_CARDS)
    names = sorted(listed(anon))
    assert names == [
        "com.example.demo-bistro/Demo-Bistro-Lyon",
        "com.example.demo-bistro/Demo-Bistro-Marseille",
        "com.example.demo-trattoria/Demo-Trattoria-mcp-1",
        "com.example.demo-trattoria/Demo-Trattoria-mcp-2",
    ]
    # The served server card and the catalog say the same name.
    item = listed(anon)["com.example.demo-bistro/Demo-Bistro-Lyon"]
    card_url = item["_meta"]["testserver/registry"]["serverCardUrl"]
    card = json.loads(anon.get(card_url.removeprefix("http://testserver")).content)
    assert card["name"] == "com.example.demo-bistro/Demo-Bistro-Lyon"
    assert errors(server_card_validator(), card) == []


def test_a_card_stored_one_by_one_names_its_servers_once(anon):
    card_store("alice", branches_card("Le Comptoir"))
    # No name in the registry's namespace first, deleted since: the one name only.
    assert list(ServerVersion.objects.values_list("name", "status")) == [
        ("com.example.tables/Le-Comptoir", "active")
    ]


def test_a_provider_claim_alone_names_its_server_in_the_registry_namespace(anon):
    from protocols.entities.models import Provider, ProviderClaim
    from protocols.entities.registration.bulk import claims_bulk_store
    from protocols.entities.registration.services import claims_with_ids

    provider = Provider.objects.create(
        provider_id="bookings", name="Bookings", endpoint="https://mcp.bookings.example/mcp"
    )
    claim = ProviderClaim.objects.create(
        provider=provider, entity_id="e1", name="Chez Claim", domain="claim.example"
    )
    claims_bulk_store(owner="alice", claims=claims_with_ids([claim]))
    [name] = listed(anon)
    # Level 0: the domain said nothing, so the registry's namespace with the agent's id.
    assert name.startswith("testserver/Chez-Claim-")


def test_a_domain_lost_and_proved_again_keeps_both_names_resolving(anon):
    from protocols.entities.registration.services import card_checked, card_flag

    stored = card_store("alice", branches_card("Le Comptoir"))
    proved = "com.example.tables/Le-Comptoir"
    assert list(listed(anon)) == [proved]
    card_flag(card=stored.card, status="missing", detail="404 when crawled")
    [fallback] = listed(anon)  # level 0 now: the registry's namespace
    assert fallback.startswith("testserver/Le-Comptoir-")
    gone = listed(anon, include_deleted="true")[proved]
    assert gone["_meta"][OFFICIAL]["status"] == "deleted"
    # The old name resolves to the new one, the same request under it.
    response = anon.get(f"/v0.1/servers/{quote(proved, safe='')}/versions/latest")
    assert response.status_code == 307
    assert response["Location"] == (
        f"http://testserver/v0.1/servers/{quote(fallback, safe='')}/versions/latest"
    )
    followed = anon.get(response["Location"].removeprefix("http://testserver"))
    assert followed.status_code == 200
    assert errors(openapi_validator("ServerResponse"), json.loads(followed.content)) == []
    versions = anon.get(f"/v0.1/servers/{quote(proved, safe='')}/versions?include_deleted=false")
    assert versions.status_code == 307 and "include_deleted=false" in versions["Location"]
    # The card is back: the same name as before, and the fallback redirects to it.
    card_checked(card=stored.card)
    assert list(listed(anon)) == [proved]
    back = anon.get(f"/v0.1/servers/{quote(fallback, safe='')}/versions/latest")
    assert back.status_code == 307 and quote(proved, safe="") in back["Location"]


def test_a_deleted_server_that_was_not_renamed_is_still_a_404(anon):
    stored = card_store("alice", branches_card("Le Comptoir"))
    card = copy.deepcopy(branches_card("Le Comptoir"))
    card["entities"][0]["path"] = "/elsewhere"  # the old entity leaves the card
    card_store("alice", card)
    old = ServerVersion.objects.get(status="deleted")
    assert stored.entities[0].pk == old.agent_uuid
    response = anon.get(f"/v0.1/servers/{quote(old.name, safe='')}/versions/latest")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_two_servers_that_would_share_a_name_each_get_their_own(anon):
    from protocols.entities.registration.bulk import cards_bulk_store

    # One write (the bulk path), two branches with one name and one version.
    cards_bulk_store(owner="alice", cards=[(DOMAIN, branches_card("Le Comptoir", "Le Comptoir"))])
    rows = list(ServerVersion.objects.order_by("endpoint_uuid"))
    first, second = rows
    assert first.name == "com.example.tables/Le-Comptoir"  # the endpoint id first in order
    assert second.name == f"com.example.tables/Le-Comptoir-{second.endpoint_uuid.hex[:8]}"
    assert len(listed(anon)) == 2
    # Stable: written again, every server keeps its name.
    call_command("mcp_servers_sync")
    assert [r.name for r in ServerVersion.objects.order_by("endpoint_uuid")] == [
        first.name,
        second.name,
    ]
    assert ServerVersion.objects.count() == 2


def test_a_later_server_never_takes_a_name_another_had(alice, anon, native_payload):
    from datetime import timedelta

    from django.utils import timezone

    from registry.agents.models import DomainClaim

    DomainClaim.objects.create(
        domain="bookings.example",
        owner="alice",
        token="t",
        state=DomainClaim.State.VERIFIED,
        expires_at=timezone.now() + timedelta(days=1),
    )
    made = []
    for index, version in enumerate(("1.0.0", "2.0.0")):  # versions differ: no clash by row
        payload = native_payload(name="Booking tools", version=version)
        payload["endpoints"][0].update(
            protocol="MCP", name="mcp", address=f"https://mcp{index}.bookings.example/mcp"
        )
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        made.append(response.json())
    names = listed(anon)
    second = made[1]["endpoints"][0]["id"].replace("-", "")[:8]
    assert sorted(names) == [
        "example.bookings/Booking-tools",
        f"example.bookings/Booking-tools-{second}",
    ]
    assert names["example.bookings/Booking-tools"]["server"]["version"] == "1.0.0"
    # The first agent's server retired: its name still is not the second's to take.
    assert alice.delete(f"/agents/{made[0]['id']}").status_code == 204
    assert (
        alice.patch(f"/agents/{made[1]['id']}", {"version": "3.0.0"}, format="json").status_code
        == 200
    )
    assert list(listed(anon)) == [f"example.bookings/Booking-tools-{second}"]
