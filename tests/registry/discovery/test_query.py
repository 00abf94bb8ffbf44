"""A discovery request parsed once (registry.discovery.query): each field of the typed query,
every bad value a 400 problem naming its parameter (over HTTP too: problem+json, never a
500), checked in the order the view always checked them; and the planner's choice of path
(registry.discovery.planner) from the query alone."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.http import QueryDict

from registry.discovery import planner
from registry.discovery.query import DiscoveryQuery, query_or_none, query_parse
from registry.http.problems import ProblemError


def parse(raw: str, **kwargs) -> DiscoveryQuery:
    return query_parse(QueryDict(raw), **kwargs)


def refused(raw: str, **kwargs) -> list[str]:
    """The parameters the problem names."""
    with pytest.raises(ProblemError) as caught:
        parse(raw, **kwargs)
    assert caught.value.status_code == 400
    return [problem.path for problem in caught.value.errors]


def test_an_empty_request_is_the_default_query():
    query = parse("")
    assert (query.text, query.mode, query.filters, query.sort, query.limit) == (
        "",
        "hybrid",
        (),
        "recent",
        20,
    )
    assert (query.cursor, query.live_only, query.facets, query.since) == (None, False, (), None)
    assert not query.filtered and not query.repeated and query.keys == []


def test_each_field_is_parsed_and_cleaned():
    query = parse(
        "q=+weather+&mode=keyword&tag=+Finance+&protocol=A2A&sort=name&limit=7"
        "&cursor=abc&liveOnly=true&facets=tag,+protocol,tag"
        "&updated_since=2026-01-31T12:00:00+01:00"
    )
    assert query.text == "weather"
    assert query.mode == "keyword" and not query.fused
    assert query.filter_values == {"tag": "Finance", "protocol": "A2A", "liveOnly": "true"}
    assert query.sort == "updated"  # the change feed has its own order
    assert query.limit == 7 and query.cursor == "abc" and query.live_only
    assert query.facets == ("tag", "protocol")  # once each, in order
    assert query.since == datetime(2026, 1, 31, 11, tzinfo=UTC)
    assert query.keys == ["~tag finance"]
    assert query.named == {"tag", "protocol", "liveOnly", "updated_since"}


def test_the_sort_follows_the_words():
    assert parse("q=weather").sort == "relevance"
    assert parse("q=weather&sort=").sort == "relevance"
    assert parse("q=weather&sort=recent").sort == "recent"
    assert parse("tag=x").sort == "recent"


def test_a_blank_filter_keeps_every_agent_but_counts_as_one():
    query = parse("q=weather&tag=+")
    assert query.filtered and query.filter_values == {"tag": ""} and query.keys == []


def test_a_repeated_parameter_counts_its_last_value():
    query = parse("q=weather&q=invoice")
    assert query.repeated and query.text == "invoice"


def test_a_key_too_long_is_no_key():
    assert parse("tag=" + "t" * 2100).keys is None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("bogus=1", "bogus"),
        ("q=" + "w" * 101, "q"),
        ("tag=%00", "tag"),
        ("liveOnly=maybe", "liveOnly"),
        ("protocol=Nope", "protocol"),
        ("updated_since=yesterday", "updated_since"),
        ("updated_since=2026-01-31T12:00:00", "updated_since"),  # no zone
        ("sort=bogus", "sort"),
        ("sort=updated", "sort"),
        ("sort=relevance", "sort"),  # relevance needs words
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=abc", "limit"),
        ("q=x&mode=nope", "mode"),
        ("facets=nonsense", "facets"),
    ],
)
def test_a_bad_value_is_a_problem_naming_its_field(raw, field):
    assert refused(raw) == [field]
    assert query_or_none(QueryDict(raw)) is None


def test_the_filters_are_refused_together_and_before_the_rest():
    assert refused("protocol=Nope&liveOnly=maybe&limit=0") == ["protocol", "liveOnly"]
    assert refused("sort=bogus&limit=0&mode=nope&facets=x") == ["sort"]
    assert refused("limit=0&mode=nope") == ["limit"]
    assert refused("bogus=1&protocol=Nope") == ["bogus"]


def test_a_choice_lists_what_it_allows():
    with pytest.raises(ProblemError) as caught:
        parse("liveOnly=maybe")
    assert caught.value.errors[0].message == "must be one of true, false, not 'maybe'"


def test_a_face_that_is_not_strict_ignores_names_it_does_not_know():
    query = query_parse({"q": "weather", "text": "ignored"}, strict=False)
    assert query.text == "weather" and query.filtered  # (as the view counted them)


@pytest.mark.apps("aap")
def test_a_fact_filter_left_out_is_unknown_to_that_caller():
    assert parse("aap=true").filter_values == {"aap": "true"}
    assert refused("aap=true", without=frozenset({"aap"})) == ["aap"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raw", "field"),
    [("limit=0", "limit"), ("mode=nope&q=x", "mode"), ("protocol=Nope", "protocol")],
)
def test_over_http_a_bad_value_is_problem_json_naming_the_field(anon, raw, field):
    response = anon.get(f"/discover/agents?{raw}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"] == field


def route(raw: str, lane: bool = False) -> tuple[str, ...] | None:
    found = planner.plan(parse(raw), lambda: None, lane=lane)
    return None if found is None else found.route


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ("page-cache", "keyset")),
        ("tag=finance&sort=name", ("page-cache", "keyset")),
        ("q=weather", ("page-cache", "fused")),
        ("q=weather&mode=semantic", ("page-cache", "fused")),
        ("q=weather&sort=recent", ("page-cache", "fused-sorted")),
        ("q=weather&mode=keyword", ("page-cache", "tiers")),
        ("q=weather&mode=keyword&sort=name", ("page-cache", "keyset")),
        ("q=weather&mode=keyword&liveOnly=true", ("live-candidates", "tiers")),
        ("q=weather&mode=keyword&liveOnly=true&cursor=x", ("tiers",)),
        ("q=weather&liveOnly=true", ("live-candidates", "fused")),
        ("q=weather&updated_since=2026-01-01T00:00:00Z", ("fused-sorted",)),
        ("conformant=true", ("keyset",)),
    ],
)
def test_the_view_plans_the_orms_paths(raw, expected):
    assert route(raw) == expected


@pytest.mark.django_db
def test_the_lane_leaves_the_change_feed_to_the_view():
    assert route("updated_since=2026-01-01T00:00:00Z", lane=True) is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raw", "postgres", "elsewhere"),
    [
        ("q=weather&mode=keyword", "keyword-tiers", "tiers"),
        ("q=weather&mode=keyword&tag=finance&limit=3", "keyword-tiers", "tiers"),
        ("q=weather&mode=keyword&liveOnly=true", "tiers", "tiers"),  # its candidates
        ("q=weather&mode=keyword&protocol=A2A", "keyword-tiers", "tiers"),  # a lane filter
        ("q=weather&mode=keyword&skill=forecast", "tiers", "tiers"),  # none: the ORM
        ("q=weather&protocol=A2A&transport=Http", "hybrid-first", "fused"),
        ("q=weather&protocol=A2A&liveOnly=true", "fused", "fused"),  # live and a lane filter
        ("q=weather&owner=alice", "fused", "fused"),
        ("q=weather", "hybrid-first", "fused"),
        ("q=weather&tag=finance&liveOnly=true", "hybrid-first", "fused"),
        ("q=weather&mode=semantic", "fused", "fused"),
        ("q=weather&q=invoice", "fused", "fused"),  # repeated
        ("q=weather&limit=2&cursor=abc", "fused", "fused"),
        ("tag=finance&capability=forecasts+skill", "keyed", "keyset"),
        ("tag=finance&capability=+", "shaped", "keyset"),  # one key
        ("tag=finance&sort=name", "shaped", "keyset"),
        ("tag=finance&transport=Http", "shaped", "keyset"),
        ("tag=finance&cursor=abc", "keyset", "keyset"),
        ("", "keyset", "keyset"),
    ],
)
def test_the_lane_plans_its_own_paths_first(raw, postgres, elsewhere):
    expected = postgres if connection.vendor == "postgresql" else elsewhere
    assert route(raw, lane=True)[-1] == expected
