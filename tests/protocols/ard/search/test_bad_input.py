"""Bad ARD input from anyone is a 400 naming what is wrong, on SQLite and PostgreSQL alike:
times out of range or with offsets the database cannot hold, NUL characters in a filter or
an identifier, and every facet of explore (capabilities too) answers."""

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "filter_",
    [
        "createdAfter > '2020-13-01T00:00:00Z'",
        "updatedAfter > '2020-02-30T00:00:00Z'",
        "createdAfter > '2020-01-01T00:00:00'",
        "displayName = 'a\x00b'",
    ],
)
def test_a_bad_filter_is_a_400_naming_it(anon, filter_):
    response = anon.get(f"/ard/agents?filter={quote(filter_)}")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"] == "filter"


@pytest.mark.parametrize("offset", ["+23:59", "-23:59", "+14:00"])
def test_any_rfc_3339_offset_is_read(anon, alice, native_payload, offset):
    alice.post("/agents", native_payload(), format="json")
    when = quote(f"createdAfter > '2020-01-01T00:00:00{offset}'")
    response = anon.get(f"/ard/agents?filter={when}")
    assert response.status_code == 200, response.content


def test_an_identifier_with_a_nul_is_a_400(anon):
    response = anon.get("/ard/agents/urn:air:example.com:a2a:a%00b")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "identifier"


def test_every_facet_of_explore_answers(anon, alice, native_payload):
    from protocols.ard.catalog.query import FACET_PATHS

    alice.post("/agents", native_payload(), format="json")
    for field in sorted(FACET_PATHS):
        body = {"query": {"text": ""}, "resultType": {"facets": [{"field": field}]}}
        response = anon.post("/ard/explore", body, format="json")
        assert response.status_code == 200, (field, response.content)
        assert field in response.json()["facets"]
