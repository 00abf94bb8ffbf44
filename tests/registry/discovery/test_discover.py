"""GET /discover/agents: filters and cursor pagination."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def population(alice, native_payload):
    def add(name, caps, endpoints=None, description=""):
        payload = native_payload(name=name, description=description, capabilities=caps)
        if endpoints is not None:
            payload["endpoints"] = endpoints
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    mcp = [{"name": "m", "transport": "Http", "protocol": "MCP", "address": "https://m.example"}]
    amqp = [{"name": "q", "transport": "Amqp", "protocol": "Generic", "address": "jobs"}]
    return {
        "summarizer": add(
            "Summarizer",
            [{"name": "Summarize", "tags": ["NLP", "text"]}],
            description="Summaries of long reports",
        ),
        "translator": add("Translator", [{"name": "translate", "tags": ["nlp"]}], mcp),
        "weather": add(
            "Weather",
            [{"name": "forecast", "tags": ["weather"]}],
            amqp,
            description="Forecasts for reports",
        ),
    }


def names(response):
    assert response.status_code == 200, response.content
    return sorted(a["name"] for a in response.json()["results"])


def test_capability_filter_is_case_insensitive(anon, population):
    assert names(anon.get("/discover/agents", {"capability": "summarize"})) == ["Summarizer"]
    assert names(anon.get("/discover/agents", {"capability": "TRANSLATE"})) == ["Translator"]


def test_tag_filter_matches_any_case(anon, population):
    assert names(anon.get("/discover/agents", {"tag": "nlp"})) == ["Summarizer", "Translator"]


def test_protocol_and_transport_filters(anon, population):
    assert names(anon.get("/discover/agents", {"protocol": "MCP"})) == ["Translator"]
    assert names(anon.get("/discover/agents", {"protocol": "A2A"})) == ["Summarizer"]
    assert names(anon.get("/discover/agents", {"transport": "Amqp"})) == ["Weather"]


def test_text_search_covers_name_and_description(anon, population):
    assert names(anon.get("/discover/agents", {"q": "report"})) == ["Summarizer", "Weather"]
    assert names(anon.get("/discover/agents", {"q": "transl"})) == ["Translator"]


def test_filters_combine(anon, population):
    assert names(anon.get("/discover/agents", {"tag": "nlp", "protocol": "MCP"})) == ["Translator"]


def test_an_unknown_protocol_value_is_a_400_naming_the_parameter(anon, population):
    response = anon.get("/discover/agents", {"protocol": "Carrier-Pigeon"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "protocol"


def test_cursor_pagination_walks_every_agent_once(alice, anon, native_payload):
    for index in range(25):
        alice.post("/agents", native_payload(name=f"Agent {index:02d}"), format="json")
    seen = []
    response = anon.get("/discover/agents", {"limit": 10})
    pages = 0
    while True:
        body = response.json()
        pages += 1
        assert len(body["results"]) <= 10
        seen += [a["name"] for a in body["results"]]
        if not body["next"]:
            break
        assert "cursor=" in body["next"]
        response = anon.get(body["next"])
    assert pages == 3
    assert sorted(seen) == [f"Agent {i:02d}" for i in range(25)]


def test_default_page_is_20_and_limit_takes_1_to_100(alice, anon, native_payload):
    for index in range(21):
        alice.post("/agents", native_payload(name=f"A{index}"), format="json")
    assert len(anon.get("/discover/agents").json()["results"]) == 20
    assert len(anon.get("/discover/agents", {"limit": 100}).json()["results"]) == 21
    assert len(anon.get("/discover/agents", {"limit": 1}).json()["results"]) == 1


@pytest.mark.parametrize(
    ("params", "path"),
    [({"limit": "zero"}, "limit"), ({"limit": 0}, "limit"), ({"cursor": "garbage"}, "cursor")],
)
def test_bad_paging_parameters_are_400(anon, population, params, path):
    response = anon.get("/discover/agents", params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == path


def test_listing_does_not_query_per_agent(anon, population, django_assert_max_num_queries):
    # the page's keys, its rows, their capabilities and endpoints, the last-change time
    with django_assert_max_num_queries(5):
        response = anon.get("/discover/agents")
    assert len(response.json()["results"]) == 3
