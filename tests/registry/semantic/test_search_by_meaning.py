"""Search by meaning through GET /discover/agents: mode keyword, semantic and hybrid."""

import pytest
from django.core.management import call_command

from registry.discovery.generation import generation_read
from registry.semantic.models import AgentVector

pytestmark = pytest.mark.django_db
MODES = ("keyword", "semantic", "hybrid")


def ids(response):
    assert response.status_code == 200, response.content
    return [agent["id"] for agent in response.json()["results"]]


def test_a_query_sharing_no_word_finds_its_agent(anon, population):
    for query, wanted in (
        ("turn speech into text", "scribe"),
        ("will it rain tomorrow", "weather"),
        ("cheap plane tickets to Rome", "flights"),
    ):
        assert ids(anon.get("/discover/agents", {"q": query, "mode": "keyword"})) == []
        for mode in ("semantic", "hybrid"):
            found = ids(anon.get("/discover/agents", {"q": query, "mode": mode}))
            assert found[0] == population[wanted], (query, mode)
        # hybrid is the default
        assert ids(anon.get("/discover/agents", {"q": query}))[0] == population[wanted]


def test_hybrid_keeps_an_exact_keyword_answer_first(anon, population):
    found = ids(anon.get("/discover/agents", {"q": "PDF table extraction"}))
    assert found[0] == population["pdf"]


def test_keyword_mode_answers_as_search_by_words(anon, population):
    found = ids(anon.get("/discover/agents", {"q": "transcription", "mode": "keyword"}))
    assert found == [population["scribe"]]


def test_filters_apply_exactly_in_every_mode(anon, add_agent, population):
    # The nearest agent to the query lacks the tag; the tagged ones are far from it.
    tagged = [
        add_agent(f"Tagged {n}", f"Inventory reports number {n}.", [{"name": "r", "tags": ["ops"]}])
        for n in range(3)
    ]
    for mode in MODES:
        for query in ("turn speech into text", "Inventory reports"):
            found = ids(anon.get("/discover/agents", {"q": query, "mode": mode, "tag": "ops"}))
            assert set(found) <= set(tagged), (mode, query)
    found = ids(
        anon.get("/discover/agents", {"q": "stock level reports", "mode": "semantic", "tag": "ops"})
    )
    assert set(found) == set(tagged)
    # A filter that nothing passes leaves nothing, whatever the text's meaning.
    for mode in MODES:
        assert (
            ids(anon.get("/discover/agents", {"q": "speech", "mode": mode, "tag": "nothing"})) == []
        )


def test_facet_counts_count_the_agents_of_the_mode(anon, population):
    body = anon.get(
        "/discover/agents", {"q": "turn speech into text", "mode": "semantic", "facets": "tag"}
    ).json()
    counted = {row["value"]: row["count"] for row in body["facets"]["tag"]}
    shown = {tag for agent in body["results"] for c in agent["capabilities"] for tag in c["tags"]}
    assert counted and set(counted) <= shown
    keyword = anon.get(
        "/discover/agents", {"q": "turn speech into text", "mode": "keyword", "facets": "tag"}
    ).json()
    assert keyword["facets"]["tag"] == []


def test_a_fused_order_pages_with_its_cursor(anon, population):
    first = anon.get(
        "/discover/agents",
        {"q": "restaurant reservations and airline ticket booking", "mode": "semantic", "limit": 1},
    ).json()
    assert first["next"] and "mode=semantic" in first["next"]
    second = anon.get(first["next"]).json()
    assert second["results"][0]["id"] != first["results"][0]["id"]
    # A cursor of another mode is refused, naming cursor.
    cursor = first["next"].split("cursor=")[1].split("&")[0]
    response = anon.get(
        "/discover/agents", {"q": "restaurant reservations", "mode": "hybrid", "cursor": cursor}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "cursor"


@pytest.mark.parametrize("value", ["bogus", "KEYWORD", "semantic,keyword"])
def test_a_bad_mode_is_a_problem_naming_mode(anon, value):
    for params in ({"q": "weather", "mode": value}, {"mode": value}):
        response = anon.get("/discover/agents", params)
        assert response.status_code == 400
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["errors"][0]["path"] == "mode"


def test_each_write_stores_the_agents_vector_with_its_model(alice, anon, population):
    vector = AgentVector.objects.get(agent_id=population["weather"])
    assert vector.model.startswith("wordllama-") and len(bytes(vector.vector)) == 256
    before = bytes(vector.vector)
    query = {"q": "a dinner out with friends", "mode": "semantic"}
    assert population["weather"] not in ids(anon.get("/discover/agents", query))
    response = alice.patch(
        f"/agents/{population['weather']}",
        {"description": "Restaurant reservations for a dinner out with friends."},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert bytes(AgentVector.objects.get(agent_id=population["weather"]).vector) != before
    assert population["weather"] in ids(anon.get("/discover/agents", query))


def test_embeddings_rebuild_embeds_every_agent_again(population, capsys):
    AgentVector.objects.all().delete()
    call_command("embeddings_rebuild", "--missing")
    assert AgentVector.objects.count() == len(population)
    AgentVector.objects.update(model="another-model@1")
    before = generation_read()
    call_command("embeddings_rebuild")
    assert set(AgentVector.objects.values_list("model", flat=True)) != {"another-model@1"}
    assert f"Embedded {len(population)} agents" in capsys.readouterr().out
    # Pages found by meaning before were cached at the data generation: it moved on.
    assert generation_read() > before


def test_browse_takes_the_mode(client, population):
    page = client.get("/browse", {"q": "turn speech into text"})
    assert page.status_code == 200 and b"Scribe Audio" in page.content
    assert b'<select id="mode" name="mode" form="search">' in page.content
    page = client.get("/browse", {"q": "turn speech into text", "mode": "keyword"})
    assert b"Scribe Audio" not in page.content


def test_a_write_while_the_service_is_down_is_embedded_later(add_agent, settings, tmp_path):
    settings.SEMANTIC_SOCKET = str(tmp_path / "nobody-listens.sock")
    agent = add_agent("Late", "Written while the embedding service was starting.")
    assert not AgentVector.objects.filter(agent_id=agent).exists()
    settings.SEMANTIC_SOCKET = ""
    from registry.semantic.tasks import vectors_fill

    assert vectors_fill() == 1
    assert AgentVector.objects.filter(agent_id=agent).exists()


def test_a_repeated_hybrid_page_is_served_from_the_cache(
    anon, population, django_assert_max_num_queries
):
    query = {"q": "turn speech into text"}
    first = anon.get("/discover/agents", query).content
    # Its keys from the page cache at the current data generation: the listings alone.
    with django_assert_max_num_queries(2):
        assert anon.get("/discover/agents", query).content == first


def test_the_fused_score_is_what_the_ard_guide_says():
    from registry.discovery.hybrid import fuse

    # First in both orders: 100; first in one and second in the other: 99 each.
    assert fuse(["a", "b"], [("a", 0.9), ("b", 0.8)])[0] == ("a", 100.0)
    assert [round(s) for _, s in fuse(["a", "b"], [("b", 0.9), ("a", 0.8)])] == [99, 99]
    # Found by one order only: about half, 50, 49, 48, 48 by place.
    fused = fuse([], [(name, 0.5) for name in "wxyz"])
    assert [round(s) for _, s in fused] == [50, 49, 48, 48]
