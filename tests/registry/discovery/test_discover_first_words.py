"""Queries of words never asked before, on the lean lane (registry.discovery.first): in the
default (hybrid) mode with and without keys, live, by tiers, with the nearest agents by
meaning and the facets of a fused page; found on the lane, their answer is the view's, byte
for byte and header for header (on PostgreSQL the words and index keys through the lane's
own statement)."""

import json
import uuid

import pytest

from tests.registry.discovery.conftest import lane_answer, view_answer

pytestmark = pytest.mark.django_db


HYBRID_FIRST_QUERIES = [
    "/discover/agents?q=weather",
    "/discover/agents?q=weather&limit=2",
    "/discover/agents?q=bills+for+forecasts",  # words of the text, and near in meaning
    "/discover/agents?q=invoice&tag=finance",
    "/discover/agents?q=forecasts&tag=CLIMATE&capability=forecasts+skill&limit=3",
    "/discover/agents?q=nothingmatches",  # no keyword order: by meaning alone
    "/discover/agents?q=weather&tag=nosuchtag",
    "/discover/agents?q=weather&tag=+",  # a blank filter keeps every agent, but counts as one
    "/discover/agents?q=%C3%A9t%C3%A9+weather",
    "/discover/agents?q=weather+invo&mode=hybrid&facets=tag",
]


# Of HYBRID_FIRST_QUERIES, those whose tag and capability filters name few agents: the lane
# asks for the nearest among those at once (first._keyed_among).
KEYED_HYBRID_QUERIES = {
    "/discover/agents?q=invoice&tag=finance": ("finance", None),
    "/discover/agents?q=forecasts&tag=CLIMATE&capability=forecasts+skill&limit=3": (
        "climate",
        "forecasts skill",
    ),
    "/discover/agents?q=weather&tag=nosuchtag": ("nosuchtag", None),
}


def keys_agents(tag: str, capability: str | None) -> frozenset[str]:
    """The agents with this tag (and capability), as the view's filters find them."""
    from registry.agents.models import Capability, CapabilityTag

    found = set(CapabilityTag.objects.filter(value=tag).values_list("agent_id", flat=True))
    if capability is not None:
        named = Capability.objects.filter(name__iexact=capability)
        found &= set(named.values_list("agent_id", flat=True))
    return frozenset(map(str, found))


@pytest.mark.postgres
@pytest.mark.parametrize("nearest_all", [None, 2])
@pytest.mark.parametrize("keyed_among", [None, 2])
def test_words_and_keys_in_the_default_mode_are_found_by_the_lanes_statements(
    agents, monkeypatch, nearest_all, keyed_among
):
    """The keyword order by the lane's tier statement, the nearest agents kept by the keys
    in one statement; with ``nearest_all`` 2 the nearest of all rarely hold enough that the
    keys keep, and the nearest among the kept ones are asked for. Tag and capability
    filters that name few agents (``first.KEYED_AMONG``; 2 leaves only a tag no agent has):
    the nearest among those agents are asked for at once; more, only once too few of the
    nearest of all are kept. The answer is the view's."""
    from registry.discovery import first, hybrid

    if nearest_all is not None:
        monkeypatch.setattr(hybrid, "NEAREST_ALL", nearest_all)
    if keyed_among is not None:
        monkeypatch.setattr(first, "KEYED_AMONG", keyed_among)
    found, among, begun = [], [], []
    monkeypatch.setattr(first, "hybrid_first_page", spy(first.hybrid_first_page, found))
    monkeypatch.setattr(first.client, "nearest", spy(first.client.nearest, among))
    monkeypatch.setattr(first.client, "nearest_begin", spy(first.client.nearest_begin, begun))
    asked_among = 0
    for path in HYBRID_FIRST_QUERIES:
        expected = view_answer(path)
        by_view = nearest_among(among)
        begun.clear()
        answer, asked_django = lane_answer(path)
        assert not asked_django and answer == expected, path
        assert expected[0] == 200, path
        by_lane = nearest_among(among)
        named = keys_agents(*KEYED_HYBRID_QUERIES[path]) if path in KEYED_HYBRID_QUERIES else None
        if named is not None and len(named) <= first.KEYED_AMONG:
            # Asked once, before the keyword statement, among the agents the keys name (and
            # not at all when they name none).
            assert by_lane == [], path
            asked = [(first.KEYED_ROOM * hybrid.DEPTH, named)] if named else []
            assert [(k, ids) for _, k, ids in nearest_among(begun)] == asked, path
        else:
            # The nearest among the agents the keys keep: asked alike by both, or by neither
            # (but for the keys, the lane's among those their indexes name: retired ones too).
            if named is not None:
                by_view = [(text, first.KEYED_ROOM * hybrid.DEPTH, named) for text, *_ in by_view]
            assert by_lane == by_view, path
            assert nearest_among(begun) == by_lane, path  # (nearest begins its search)
            asked_among += len(by_view)
    assert len(found) == len(HYBRID_FIRST_QUERIES)
    assert bool(asked_among) == (nearest_all is not None)


@pytest.mark.postgres
@pytest.mark.parametrize("matrix_behind", [False, True])
def test_retired_agents_among_the_keys_nearest_leave_room_for_the_next_as_in_the_view(
    agents, alice, monkeypatch, matrix_behind
):
    """A retired agent keeps its tags, not its search row nor its row in the matrix. A
    matrix that holds the page's generation has dropped it: the nearest asked for first are
    the page's. One behind (``exact`` False: the service could not look in time) may hold
    retired agents: when they are most of the nearest first asked for among a tag's agents,
    all of them are asked for. Either way the page is the view's."""
    from registry.discovery import first, hybrid
    from registry.semantic import client
    from registry.semantic.index import VectorIndex

    monkeypatch.setattr(hybrid, "DEPTH", 2)
    tagged = keys_agents("finance", None)
    text = "billing statements"  # no agent has these words: the page is the nearest alone
    nearest = client.nearest(text, 4, among=[uuid.UUID(pk) for pk in tagged])
    if matrix_behind:  # it looks no more: the retirements below are not in it
        monkeypatch.setattr(VectorIndex, "refresh", lambda self, covering=None: None)
    for pk, _ in nearest[:3]:
        assert alice.delete(f"/agents/{pk}").status_code == 204
    path = "/discover/agents?q=billing+statements&tag=finance&limit=2"
    expected = view_answer(path)
    among = []
    monkeypatch.setattr(first.client, "nearest", spy(first.client.nearest, among))
    answer, asked_django = lane_answer(path)
    assert not asked_django and answer == expected and expected[0] == 200
    # (the first search among them went out before the spy: nearest_begin)
    assert nearest_among(among) == ([(text, len(tagged), tagged)] if matrix_behind else [])
    assert not any(str(pk).encode() in expected[2] for pk, _ in nearest[:3])
    assert len(json.loads(expected[2])["results"]) == 2


def nearest_among(calls: list) -> list:
    """The searches of ``calls`` among some agents (text, k, the agents), and forget all."""
    asked = [(a[0], a[1], ids_of(a[2])) for a in calls if a[2:3] not in [(None,), ()]]
    calls.clear()
    return asked


def ids_of(among) -> frozenset[str]:
    """The agents of ``among``: ids, or their 16 bytes each one after the other."""
    if isinstance(among, bytes):
        among = [uuid.UUID(bytes=among[at : at + 16]) for at in range(0, len(among), 16)]
    return frozenset(map(str, among))


def spy(function, calls: list):
    def called(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    return called


@pytest.fixture
def some_live(alice, native_payload):
    from tests.registry.liveness.test_liveness import endpoint

    for number in range(12):
        payload = native_payload(
            name=f"Weather station {number}",
            description="Reports the weather of the day.",
            capabilities=[{"name": "report", "tags": ["climate" if number % 2 else "sea"]}],
            endpoints=[endpoint(f"web{number}", seconds=60)],
        )
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        if number % 3:
            assert alice.post(f"/agents/{response.json()['id']}/heartbeat").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/discover/agents?q=weather&liveOnly=true",
        "/discover/agents?q=weather&liveOnly=true&limit=2",
        "/discover/agents?q=stat&tag=climate&liveOnly=true&limit=3",
        "/discover/agents?q=weather+stat&liveOnly=true&limit=3",  # one scan's keys
        "/discover/agents?q=weather&liveOnly=true&facets=live",
        "/discover/agents?q=weather&liveOnly=true&status=active&limit=2",
        "/discover/agents?tag=sea&liveOnly=true",
    ],
)
def test_a_first_live_query_on_the_lane_answers_as_the_view(some_live, path):
    expected = view_answer(path)
    answer, asked_django = lane_answer(path)
    assert not asked_django
    assert answer == expected and expected[0] == 200
    assert b'"live":true' in expected[2]  # it has live agents to show


@pytest.fixture
def tiered(alice, native_payload):
    """Agents in each relevance tier of the words "route plan", each tier's oldest first:
    the words in the name (2), in the titles (1: capability names and tags), in the text."""
    agents = [
        ("Route Planner", "Plans trips.", []),
        ("Trips", "Finds trips.", [{"name": "route planning", "tags": ["travel"]}]),
        ("Helper", "Route plans for anyone.", []),
        ("Route Planner Two", "Plans more trips.", []),
        ("Other", "Something else.", [{"name": "Route", "tags": ["plan"]}]),
        ("Unrelated", "Plans nothing of the kind.", []),
    ]
    ids = {}
    for name, description, capabilities in agents:
        payload = native_payload(name=name, description=description, capabilities=capabilities)
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        ids[name] = uuid.UUID(response.json()["id"])
    return ids


@pytest.mark.postgres
@pytest.mark.parametrize("generation_row", [False, True])
def test_one_scan_of_the_words_finds_the_keys_of_the_tiers_statements(
    tiered, monkeypatch, generation_row
):
    from registry.discovery import first_keys as statements

    order = ["Route Planner Two", "Route Planner", "Other", "Trips", "Helper"]
    queries = [
        ("route plan", (), 10, order),
        ("plan route", (), 10, order),
        ("route plan", (), 2, order[:3]),  # limit + 1 keys
        ("route plan", (), 3, order[:4]),
        ("rout pla trip", (), 10, ["Trips", "Route Planner Two", "Route Planner"]),
        ("route plan", ("~tag travel",), 10, ["Trips"]),
        ("route plan", ("~tag nosuchtag",), 10, []),
        ("nothing here", (), 10, []),
    ]
    for text, keys, limit, expected in queries:
        query = statements.FirstQuery(text, keys, limit)
        found = {}
        for threshold in (1, 99):  # one scan always, a statement a tier always
            monkeypatch.setattr(statements, "ONE_SCAN_TERMS", threshold)
            found[threshold] = statements.first_keys(query, generation_row=generation_row)
            # The same keys with their ids as text and no time (the fused order's).
            as_text = statements.first_keys(query, generation_row=generation_row, text_ids=True)
            assert as_text[1] == found[threshold][1], text
            assert as_text[0] == [
                (str(pk), [tier, None]) for pk, (tier, _) in found[threshold][0]
            ], text
        assert found[1] == found[99], text
        keys_found, generation = found[1]
        assert [pk for pk, _ in keys_found] == [tiered[name] for name in expected], text
        assert (generation is not None) == (generation_row or bool(expected))
    monkeypatch.setattr(statements, "ONE_SCAN_TERMS", 1)
    keys_found, _ = statements.first_keys(statements.FirstQuery("route plan", (), 10))
    assert [key[0] for _, key in keys_found] == [2, 2, 1, 1, 0]


@pytest.mark.postgres
@pytest.mark.parametrize("matrix_behind", [False, True])
@pytest.mark.parametrize("depth", [2, 100])
def test_the_nearest_without_filters_leave_out_a_retired_agent_as_the_view_does(
    agents, alice, monkeypatch, depth, matrix_behind
):
    """Without filters the lane takes the nearest agents of a matrix that holds the page's
    generation as they come (a retired agent has left it); from one behind (the service
    could not look in time) it looks up the first DEPTH of them, then the others only when
    some of those are gone. Either way a retired agent is left out, as the view leaves it."""
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    from registry.agents.models import Agent
    from registry.discovery import first, hybrid
    from registry.semantic import client
    from registry.semantic.index import VectorIndex

    monkeypatch.setattr(hybrid, "DEPTH", depth)
    path = "/discover/agents?q=bills+for+forecasts&limit=3"
    ours = list(Agent.objects.values_list("pk", flat=True))
    nearest = client.nearest("bills for forecasts", 1, among=ours)[0][0]
    if matrix_behind:  # it looks no more: the retirement below is not in it
        monkeypatch.setattr(VectorIndex, "refresh", lambda self, covering=None: None)
    assert alice.delete(f"/agents/{nearest}").status_code == 204
    statements = []
    monkeypatch.setattr(first, "_semantic_kept", spy(first._semantic_kept, statements))
    expected = view_answer(path)
    with CaptureQueriesContext(db) as sql:
        answer, asked_django = lane_answer(path)
    assert not asked_django and answer == expected and expected[0] == 200
    assert statements  # the lane's own nearest answered
    looked_up = [q for q in sql if '"agent_id" = ANY(' in (q["sql"] or "")]
    assert bool(looked_up) == matrix_behind
    assert str(nearest) not in expected[2].decode()
    assert expected[2].count(b'"id":') >= 3


@pytest.mark.postgres
@pytest.mark.parametrize(
    "path",
    [
        "/discover/agents?q=weather+invo&facets=tag,protocol",
        "/discover/agents?q=invoice&tag=finance&facets=tag&limit=2",
        "/discover/agents?q=nothingmatches&facets=tag",
    ],
)
def test_the_facets_of_a_fused_first_page_count_the_order_the_page_found(agents, monkeypatch, path):
    """The lane counts the facets over the fused order its page found: the view's counts,
    without finding the order a second time."""
    from registry.discovery import discover

    expected = view_answer(path)
    orders = []
    monkeypatch.setattr(discover, "_fused", spy(discover._fused, orders))
    answer, asked_django = lane_answer(path)
    assert not asked_django and answer == expected and expected[0] == 200
    assert b'"facets":{' in expected[2]
    assert orders == []


LIVE_HYBRID_QUERIES = [
    "/discover/agents?q=weather&liveOnly=true",
    "/discover/agents?q=weather+stat&liveOnly=true&limit=3",
    "/discover/agents?q=stat&tag=climate&liveOnly=true",
    "/discover/agents?q=reports+of+the+day&tag=sea&liveOnly=true&facets=tag",
    "/discover/agents?q=nothingmatches&liveOnly=true",  # by meaning alone
]


@pytest.mark.postgres
@pytest.mark.parametrize("nearest_all", [None, 2])
def test_live_words_in_the_default_mode_are_found_by_the_lanes_statements(
    some_live, monkeypatch, nearest_all
):
    """liveOnly words in the default mode: both orders of the live agents alone, by the
    lane's statements; with ``nearest_all`` 2 the nearest among the live ones are asked."""
    from registry.discovery import first, hybrid

    if nearest_all is not None:
        monkeypatch.setattr(hybrid, "NEAREST_ALL", nearest_all)
    found, among, bodies = [], [], []
    monkeypatch.setattr(first, "hybrid_first_page", spy(first.hybrid_first_page, found))
    monkeypatch.setattr(first.client, "nearest", spy(first.client.nearest, among))
    asked_among = 0
    for path in LIVE_HYBRID_QUERIES:
        expected = view_answer(path)
        by_view = set(nearest_among(among))  # (the view finds the order again for facets)
        answer, asked_django = lane_answer(path)
        assert not asked_django and answer == expected and expected[0] == 200, path
        by_lane = set(nearest_among(among))
        assert by_lane == by_view, path
        assert b'"live":false' not in expected[2], path
        bodies.append(expected[2])
        asked_among += len(by_lane)
    assert len(found) == len(LIVE_HYBRID_QUERIES)
    # The nearest among the live agents (the lane's packing statement with the liveness
    # condition) were asked for exactly when the nearest of all held too few of them.
    assert bool(asked_among) == (nearest_all is not None)
    assert all(b'"live":true' in body for body in bodies[:4])  # live agents found
