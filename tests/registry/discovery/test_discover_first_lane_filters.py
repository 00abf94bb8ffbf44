"""First queries of words with the filters beyond the search index's keys, on the lean lane
(registry/discovery/lane_filters.py): a provider (a case-insensitive fact), a binding (an
exact fact), streaming (a flag fact), the endpoints' protocol and transport, each with and
without a tag, in the default mode and in keyword mode. Their answer is the view's, byte
for byte; on PostgreSQL the lane's own statements find them (hybrid-first, keyword-tiers)."""

import pytest

from tests.registry.discovery.conftest import card, lane_answer, view_answer

pytestmark = [pytest.mark.django_db, pytest.mark.apps("a2a")]

PROVIDERS = ("Acme", "Muse Labs", "Tern Freight")
BINDINGS = ("JSONRPC", "HTTP+JSON")


@pytest.fixture
def carded(alice):
    """Eighteen A2A agents: three providers, two bindings, streaming or not, two words."""
    ids = {}
    for index in range(18):
        words = ("route planner", "invoice reader")[index % 2]
        doc = card(
            f"{words.split()[0].title()} Agent {index}",
            url=f"https://agent-{index}.example/a2a",
            provider=PROVIDERS[index % 3],
            binding=BINDINGS[index % 4 // 2],
            description=f"A {words} for trucks number {index}.",
            skills=[
                (
                    f"s{index}",
                    words.title(),
                    f"Does {words} work.",
                    [("freight", "bills")[index % 2]],
                )
            ],
            capabilities={"streaming": index % 5 == 0},
        )
        response = alice.post("/a2a/agents", {"card": doc}, format="json")
        assert response.status_code == 201, response.content
        ids[doc["name"]] = response.json()["id"]
    return ids


FILTERED_FIRST_QUERIES = [
    "/discover/agents?q=route&provider=muse+labs",  # case-insensitive
    "/discover/agents?q=route&provider=MUSE+LABS&limit=2",  # a next link
    "/discover/agents?q=route+plan&provider=Tern+Freight",  # two words: one scan
    "/discover/agents?q=invoice&provider=nobody",  # names no agent
    "/discover/agents?q=invoice&provider=",  # blank: keeps every agent
    "/discover/agents?q=route&protocolBinding=HTTP%2BJSON",
    "/discover/agents?q=route&protocolBinding=http%2Bjson",  # exact: none
    "/discover/agents?q=invoice&streaming=true",
    "/discover/agents?q=invoice&streaming=false&facets=tag,provider",
    "/discover/agents?q=route&protocol=A2A",
    "/discover/agents?q=route&transport=Http",
    "/discover/agents?q=route&tag=freight&provider=acme&protocolBinding=JSONRPC",
    "/discover/agents?q=trucks&provider=acme&streaming=true&protocol=A2A",
    "/discover/agents?q=nothingmatches&provider=acme",  # by meaning alone
]
MODES = ["", "&mode=keyword", "&mode=semantic"]


@pytest.mark.parametrize("mode", MODES)
def test_a_first_query_with_a_lane_filter_answers_as_the_view(carded, mode):
    # (One population for every query of a mode: each is asked afresh, nothing cached.)
    for path in FILTERED_FIRST_QUERIES:
        expected = view_answer(path + mode)
        answer, asked_django = lane_answer(path + mode)
        assert not asked_django, path
        assert answer == expected, path
        assert expected[0] == 200, path


def _agents_of(answer) -> list[dict]:
    import json

    return json.loads(answer[2])["results"]


@pytest.mark.postgres
def test_the_lanes_statements_find_words_with_each_filter_kind(carded, monkeypatch):
    """On PostgreSQL the lane's own paths answer (not the ORM's), keep only what each
    filter keeps, and, when the filters name more agents than the nearest are asked among
    at once (``first.LANE_AMONG`` set to 2), test each search row against them instead;
    with ``hybrid.NEAREST_ALL`` 2 too, the nearest of all rarely hold enough that the
    filters keep, and the nearest among the kept ones are asked for."""
    from registry.discovery import first, hybrid, planner

    chosen = []
    original = planner.Plan

    def plan_noted(path, *args, **kwargs):
        chosen.append(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(planner, "Plan", plan_noted)
    for keyed_among, nearest_all in [(first.KEYED_AMONG, hybrid.NEAREST_ALL), (2, 1000), (2, 2)]:
        monkeypatch.setattr(first, "KEYED_AMONG", keyed_among)
        monkeypatch.setattr(first, "LANE_AMONG", min(keyed_among, first.LANE_AMONG))
        monkeypatch.setattr(hybrid, "NEAREST_ALL", nearest_all)
        for path, mode, kept in [
            ("/discover/agents?q=route&provider=muse+labs", "", {"Muse Labs"}),
            ("/discover/agents?q=route&provider=muse+labs", "&mode=keyword", {"Muse Labs"}),
            # No agent has all these words: by meaning alone, among the provider's.
            ("/discover/agents?q=journeys+for+lorries&provider=muse+labs", "", {"Muse Labs"}),
            ("/discover/agents?q=trucks&protocolBinding=HTTP%2BJSON", "", None),
            ("/discover/agents?q=trucks&streaming=true&protocol=A2A", "", None),
        ]:
            chosen.clear()
            expected = view_answer(path + mode)
            answer, asked_django = lane_answer(path + mode)
            assert answer == expected and not asked_django
            assert chosen[-1] == ("keyword-tiers" if mode else "hybrid-first")
            found = _agents_of(answer)
            assert found, path
            if kept is not None:
                # (An agent's name ends with its number, which chose its provider.)
                providers = {PROVIDERS[int(a["name"].split()[-1]) % 3] for a in found}
                assert providers == kept
