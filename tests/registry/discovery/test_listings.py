"""Stored listings (registry/discovery/listings.py): discovery pages are the agents' JSON, read from
bytes stored at write time, with the liveness of the moment merged in."""

import pytest
from django.core.management import call_command

from registry.agents.models import Agent, Endpoint
from registry.agents.selectors import agent_queryset
from registry.discovery import bodies
from registry.discovery.bodies import _object, listing_bodies
from registry.discovery.listings import listing_context, listings_read
from registry.discovery.models import AgentListing, DataGeneration
from tests.conftest import listings_serialized

pytestmark = pytest.mark.django_db


def endpoint(name, seconds=30, protocol="Generic"):
    return {
        "name": name,
        "transport": "Http",
        "protocol": protocol,
        "address": f"https://{name}.example.com/",
        "livenessModel": "Persistent",
        "heartbeatIntervalSeconds": seconds,
    }


@pytest.fixture
def agents(alice, native_payload) -> list[str]:
    created = []
    for index in range(4):
        payload = native_payload(
            name=f"Listed {index}",
            description="Plans \u2028 routes <b>fast</b> \u00e9t\u00e9 \U0001f680",
            capabilities=[{"name": "route", "tags": ["maps", f"t{index}"]}],
            endpoints=[endpoint("web", protocol="A2A"), endpoint("backup", 60)][: 1 + index % 2],
        )
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        created.append(response.json()["id"])
    return created


def shown_one_by_one(client, ids) -> list[dict]:
    return [client.get(f"/agents/{agent_id}").json() for agent_id in ids]


@pytest.mark.parametrize("params", [{"q": "route"}, {"tag": "maps"}, {}, {"sort": "name"}])
def test_a_discovery_page_is_each_agent_json_as_its_own_read_shows_it(anon, agents, params):
    found = anon.get("/discover/agents", params).json()["results"]

    assert sorted(a["id"] for a in found) == sorted(agents)
    assert found == shown_one_by_one(anon, [a["id"] for a in found])


def test_heartbeats_show_in_the_listing_without_rebuilding_it(alice, anon, agents):
    agent = anon.get(f"/agents/{agents[1]}").json()
    before = bytes(AgentListing.objects.get(pk=agents[1]).body)

    response = alice.post(f"/agents/{agents[1]}/endpoints/{agent['endpoints'][1]['id']}/heartbeat")

    assert response.status_code == 200, response.content
    assert bytes(AgentListing.objects.get(pk=agents[1]).body) == before
    found = anon.get("/discover/agents", {"q": "route", "limit": 100}).json()["results"]
    listed = next(a for a in found if a["id"] == agents[1])
    assert listed["live"] is True
    assert listed["endpoints"][1]["liveness"] == response.json()["liveness"]
    assert listed == anon.get(f"/agents/{agents[1]}").json()


def test_writes_rebuild_the_listing_in_their_transaction(alice, anon, agents):
    alice.patch(f"/agents/{agents[0]}", {"name": "Renamed", "version": "2"}, format="json")
    alice.post(f"/agents/{agents[2]}/endpoints", endpoint("extra"), format="json")
    alice.delete(f"/agents/{agents[3]}")

    found = anon.get("/discover/agents", {"limit": 100}).json()["results"]

    assert sorted(a["name"] for a in found) == ["Listed 1", "Listed 2", "Renamed"]
    assert found == shown_one_by_one(anon, [a["id"] for a in found])


def test_a_page_without_facets_is_at_most_two_queries(anon, agents, django_assert_max_num_queries):
    text = {"q": "route", "mode": "keyword"}
    for params in (text, {"tag": "maps"}, {**text, "tag": "maps"}, {}):
        # The page's keys (every relevance tier in one statement), then its listings with
        # their endpoints' liveness and the registry's last change.
        with django_assert_max_num_queries(2):
            response = anon.get("/discover/agents", params)
        assert len(response.json()["results"]) == 4


def test_agents_without_a_stored_listing_are_listed_all_the_same(anon, agents):
    expected = anon.get("/discover/agents", {"q": "route"}).content
    AgentListing.objects.filter(pk__in=agents[:2]).delete()

    assert anon.get("/discover/agents", {"q": "route"}).content == expected


def test_a_listing_that_does_not_match_the_agents_endpoints_is_not_served(anon, agents):
    expected = anon.get("/discover/agents", {"q": "route"}).content
    # Agents 0 and 2 have one endpoint each: the same shape, another endpoint id.
    mine = AgentListing.objects.get(pk=agents[0]).body
    other = AgentListing.objects.get(pk=agents[2]).body
    AgentListing.objects.filter(pk=agents[0]).update(body=other)

    assert anon.get("/discover/agents", {"q": "route"}).content == expected
    AgentListing.objects.filter(pk=agents[0]).update(body=mine)


def test_the_rebuild_command_and_migrate_store_missing_listings(anon, agents, capsys):
    expected = anon.get("/discover/agents").content
    AgentListing.objects.all().delete()

    call_command("migrate", verbosity=0)  # post_migrate builds the missing ones
    assert AgentListing.objects.count() == 4
    AgentListing.objects.update(body=b"{}")
    call_command("listings_rebuild")

    assert "Rebuilt the listings of 4 agents" in capsys.readouterr().out
    assert anon.get("/discover/agents").content == expected


def test_listings_read_keeps_the_order_asked_and_skips_unknown_agents(agents):
    ids = [Agent.objects.get(pk=pk).pk for pk in reversed(agents)]
    unknown = Agent(name="gone").pk

    read = listings_read([ids[0], unknown, *ids[1:]])

    assert [listing.split(b'"name":"', 1)[1][:8] for listing in read.listings] == [
        b"Listed 3",
        b"Listed 2",
        b"Listed 1",
        b"Listed 0",
    ]
    assert read.last_change == max(Agent.objects.values_list("updated_at", flat=True))
    assert read.generation == DataGeneration.objects.get().value


def test_listings_built_under_another_base_url_are_not_served_and_migrate_rebuilds_them(
    anon, agents, settings
):
    settings.REGISTRY_BASE_URL = "https://moved.example"
    found = anon.get("/discover/agents").json()["results"]

    assert found == shown_one_by_one(anon, [a["id"] for a in found])
    assert all(
        a.get("cardUrl", "https://moved.example").startswith("https://moved.") for a in found
    )
    call_command("migrate", verbosity=0)
    assert set(AgentListing.objects.values_list("context", flat=True)) == {listing_context()}


def facets_of(client, **params):
    response = client.get("/discover/agents", {"facets": "tag", **params})
    assert response.status_code == 200, response.content
    return response.json()["facets"]["tag"]


def test_a_repeated_facet_query_is_answered_from_the_cache_without_counting_again(
    anon, agents, django_assert_max_num_queries
):
    first = facets_of(anon, q="route", mode="keyword")

    # Another page size: its keys and listings, but neither probe nor counting statement.
    with django_assert_max_num_queries(2):
        assert facets_of(anon, q="route", mode="keyword", limit="2") == first
    assert {"value": "maps", "count": 4} in first


def test_cached_facet_counts_follow_every_write(alice, anon, agents, native_payload):
    assert {"value": "maps", "count": 4} in facets_of(anon, q="route")

    payload = native_payload(capabilities=[{"name": "route", "tags": ["maps"]}])
    alice.post("/agents", payload, format="json")
    assert {"value": "maps", "count": 5} in facets_of(anon, q="route")
    alice.patch(f"/agents/{agents[0]}", {"capabilities": [{"name": "route"}]}, format="json")
    assert {"value": "maps", "count": 4} in facets_of(anon, q="route")
    alice.delete(f"/agents/{agents[1]}")
    assert {"value": "maps", "count": 3} in facets_of(anon, q="route")


def test_live_counts_are_never_cached(alice, anon, agents):
    def live(**params):
        response = anon.get("/discover/agents", {"facets": "live", **params})
        return response.json()["facets"]["live"]

    assert live() == [{"value": "false", "count": 4}]
    assert facets_of(anon, liveOnly="true") == []
    agent = anon.get(f"/agents/{agents[2]}").json()

    alice.post(f"/agents/{agents[2]}/endpoints/{agent['endpoints'][0]['id']}/heartbeat")

    assert live() == [{"value": "false", "count": 3}, {"value": "true", "count": 1}]
    assert {"value": "t2", "count": 1} in facets_of(anon, liveOnly="true")


def test_listings_are_written_member_for_member_as_the_serializer_writes_them(
    alice, agents, native_payload
):
    # Every member set, the holes' columns too: a deprecated agent with a successor and a
    # sunset; an ephemeral endpoint; a probed one (uptime); metadata in no sorted order.
    deprecated = alice.post(
        f"/agents/{agents[1]}/deprecate",
        {
            "reason": "Old \u2028 <b>one</b>",
            "successor": agents[0],
            "sunsetAt": "2031-05-06T07:08:09Z",
        },
        format="json",
    )
    assert deprecated.status_code == 200, deprecated.content
    payload = native_payload(
        name="Odd \U0001f680 \u2029 </script>",
        description="",
        version="",
        capabilities=[{"name": "a", "tags": []}, {"name": "b", "description": "x", "tags": ["Z"]}],
        endpoints=[
            {
                **endpoint("ttl"),
                "livenessModel": "Ephemeral",
                "ttlSeconds": 45,
                "heartbeatIntervalSeconds": None,
                "protocolMetadata": {"z": [1, {"b": None, "a": 2.5}], "a": "\u00e9"},
            },
            endpoint("probed", 90, protocol="A2A"),
        ],
    )
    created = alice.post("/agents", payload, format="json")
    assert created.status_code == 201, created.content
    probed = created.json()["endpoints"][1]["id"]
    Endpoint.objects.filter(pk=probed).update(
        last_probe_at="2030-01-02T03:04:05Z",
        last_probe_ok=True,
        last_probe_category="ok",
        uptime_day=0.5,
        uptime_week=0.875,
    )
    read = list(agent_queryset().filter(pk__in=[*agents, created.json()["id"]]))

    assert len(read) == 5
    assert listing_bodies(read) == listings_serialized(read)


def test_a_listing_whose_data_holds_the_holes_mark_is_written_member_by_member(agents, monkeypatch):
    # The mark drawn per process is a 39-digit number; here one the agents' JSON holds
    # elsewhere (each endpoint's heartbeat interval): the count tells, and the listing is
    # written member by member, the same bytes.
    monkeypatch.setattr(bodies, "_MARK", 30)
    monkeypatch.setattr(bodies, "_MARK_BYTES", b"30")
    read = list(agent_queryset().filter(pk__in=agents))
    expected = listings_serialized(read)
    seen = []
    monkeypatch.setattr(bodies, "_object", lambda *a: seen.append(a[1]) or _object(*a))

    assert listing_bodies(read) == expected
    assert seen.count(bodies.AGENT_HOLES) == len(read)
