"""Helpers of the enrichment tests: registering lepetitzinc.fr (its card names an MCP
endpoint on the local HTTPS server), reading its entity back, and running the crawl."""

from io import StringIO

import pytest
from django.core.management import call_command

from tests.protocols.entities.conftest import example, publish


def edp_card(server, endpoint_host: str = "mybusiness.com") -> dict:
    card = example("edp-v0.1-multi-mcp")
    card["mcps"] = card["mcps"][:1]
    card["mcps"][0]["endpoint"] = server.url("/mcp", host=endpoint_host)
    return card


@pytest.fixture
def register(network, https_server, at, alice, django_capture_on_commit_callbacks):
    """Register lepetitzinc.fr; the enrichment job queued after the write runs too."""

    def register(card: dict | None = None) -> dict:
        publish(https_server, card or edp_card(https_server))
        with django_capture_on_commit_callbacks(execute=True):
            response = alice.post("/entities", {"domain": at("lepetitzinc.fr")}, format="json")
        assert response.status_code in (200, 201), response.content
        return response.json()["entities"][0]

    return register


def entity(anon, **params) -> dict:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    (found,) = anon.get(f"/v1/resolve/domain/lepetitzinc.fr?{query}").json()["entities"]
    return found


def crawl(*options) -> str:
    out = StringIO()
    call_command("crawl_entities", "--domain", "lepetitzinc.fr", *options, stdout=out)
    return out.getvalue()
