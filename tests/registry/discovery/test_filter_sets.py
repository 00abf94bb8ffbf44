"""Two or more filters that each keep a set of agent ids (tags, capabilities, skills,
endpoints' protocols and transports, facts) are applied as the ids in all the sets, found
first: the agents found are those that each filter, applied alone one after the other,
keeps."""

import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registry.agents.selectors import agent_discoverable_queryset
from registry.discovery.filters import agent_filterset, filters_apply

pytestmark = pytest.mark.django_db

# Each agent: (name, [(capability, tags)], [(protocol, transport)]).
AGENTS = [
    ("Pdf Reader", [("read", ["pdf", "docs"])], [("A2A", "Http")]),
    ("Pdf Queue", [("read", ["pdf"]), ("Summarize", ["nlp"])], [("MCP", "Amqp")]),
    ("Docs Writer", [("write", ["docs"])], [("A2A", "Http"), ("MCP", "Http")]),
    ("Nlp Bot", [("summarize", ["nlp", "pdf"])], [("Generic", "Http")]),
    ("Bare", [], [("A2A", "Amqp")]),
]
QUERIES = [
    {"tag": "pdf", "protocol": "A2A"},
    {"tag": "pdf", "transport": "Amqp"},
    {"tag": "PDF ", "capability": "read", "protocol": "MCP"},
    {"tag": "docs", "protocol": "MCP", "transport": "Http"},
    {"capability": "summarize", "tag": "nlp"},
    {"tag": "pdf", "protocol": "A2A", "owner": "bob"},
    {"tag": "pdf", "protocol": ""},  # a blank filter keeps every agent
    {"tag": "none", "protocol": "A2A"},
    {"tag": "pdf"},
]


@pytest.fixture
def agents(alice, bob, native_payload):
    made = {}
    for index, (name, capabilities, endpoints) in enumerate(AGENTS):
        payload = native_payload(
            name=name,
            capabilities=[{"name": c, "tags": tags} for c, tags in capabilities],
            endpoints=[
                {
                    "name": f"e{position}",
                    "protocol": protocol,
                    "transport": transport,
                    "address": f"https://a{index}.example/{position}"
                    if transport == "Http"
                    else f"queue-{index}-{position}",
                }
                for position, (protocol, transport) in enumerate(endpoints)
            ],
        )
        client = bob if name == "Nlp Bot" else alice
        response = client.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        made[name] = response.json()["id"]
    return made


def _one_by_one(filterset) -> set[str]:
    """What the FilterSet's filters keep applied one after the other (each its own test)."""
    queryset = agent_discoverable_queryset()
    for name, value in filterset.form.cleaned_data.items():
        queryset = filterset.filters[name].filter(queryset, value)
    return {agent.name for agent in queryset}


@pytest.mark.parametrize("params", QUERIES)
def test_several_id_sets_keep_what_the_filters_one_by_one_keep(agents, params):
    filterset = agent_filterset()(data=params, queryset=agent_discoverable_queryset())
    assert filterset.is_valid(), filterset.errors
    with CaptureQueriesContext(connection) as queries:
        found = {agent.name for agent in filterset.qs}
    assert found == _one_by_one(filterset)
    sets = sum(1 for name in ("tag", "capability", "protocol", "transport") if params.get(name))
    among = "= ANY(ARRAY(" if connection.vendor == "postgresql" else '"agent_id" IN (SELECT'
    assert (among in queries[0]["sql"]) == (sets >= 2)


def test_the_answers_to_the_queries_are_what_the_agents_have(agents):
    filters = agent_filterset()(queryset=agent_discoverable_queryset()).filters
    found = {}
    for params in QUERIES[:5]:
        queryset = filters_apply(
            filters,
            {name: value.strip() for name, value in params.items()},
            agent_discoverable_queryset(),
        )
        found[tuple(params.values())] = sorted(agent.name for agent in queryset)
    assert list(found.values()) == [
        ["Pdf Reader"],
        ["Pdf Queue"],
        ["Pdf Queue"],
        ["Docs Writer"],
        ["Nlp Bot", "Pdf Queue"],
    ]


def test_every_pair_of_set_filters_is_exact(agents, anon):
    values = {"tag": ["pdf", "nlp"], "protocol": ["A2A", "MCP"], "transport": ["Http", "Amqp"]}
    for a, b in itertools.combinations(values, 2):
        for x, y in itertools.product(values[a], values[b]):
            params = {a: x, b: y}
            filterset = agent_filterset()(data=params, queryset=agent_discoverable_queryset())
            assert filterset.is_valid()
            expected = _one_by_one(filterset)
            page = anon.get("/discover/agents", {**params, "limit": 100}).json()["results"]
            assert {agent["name"] for agent in page} == expected, params
