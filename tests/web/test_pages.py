"""The public pages, server side: what they show, that the search is discovery's own,
and that hostile card text stays text."""

import json
import re
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from registry.agents.models import Endpoint
from registry.http.security import CONTENT_SECURITY_POLICY
from tests.web.helpers import HOSTILE_NAME, card, register

ROOT = Path(__file__).resolve().parent.parent.parent
CARD_LINK = re.compile(r'<h3><a href="/browse/agents/([0-9a-f-]{36})">')


@pytest.fixture
def agents(db):
    return {
        "weather": register(
            "alice", card("Weather Agent", "Forecast", ["weather"], host="w.example")
        ),
        "tides": register("alice", card("Tide Tables", "Tide forecast", ["sea"], host="t.example")),
        "ledger": register("bob", card("Ledger Bot", "Bookkeeping", ["finance"], host="l.example")),
    }


def page(client: Client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, url
    assert response["Content-Type"].startswith("text/html")
    return response.content.decode()


def listed(html: str) -> list[str]:
    return CARD_LINK.findall(html)


def test_home_has_a_search_form_counts_and_recent_agents(client, agents):
    html = page(client, "/")
    assert re.search(r'<form[^>]*action="/browse"', html)
    assert 'name="q"' in html
    assert "<strong>3</strong> agents" in html
    assert "<strong>0</strong> live now" in html
    soon = timezone.now() + timedelta(hours=1)
    Endpoint.objects.filter(agent=agents["weather"]).update(alive_until=soon)
    assert "<strong>1</strong> live now" in page(client, "/")
    assert "AAP dealers" in html and "verified domains" in html
    assert set(listed(html)) == {str(a.pk) for a in agents.values()}


def test_browse_lists_what_discovery_finds_in_the_same_order(client, agents):
    for query in ["q=forecast", "q=forecast&sort=name", "tag=sea", "sort=name", "owner=bob"]:
        api = client.get(f"/discover/agents?{query}").json()
        html = page(client, f"/browse?{query}")
        assert listed(html) == [row["id"] for row in api["results"]], query
    html = page(client, "/browse?q=forecast")
    assert "2 agents matching “forecast”, best match first." in html
    assert 'href="/browse" aria-current="page"' in html
    assert listed(page(client, "/browse?q=forecast&sort=name")) == [
        str(agents["tides"].pk),
        str(agents["weather"].pk),
    ]


def test_facet_links_narrow_the_search_and_keep_the_query(client, agents):
    html = page(client, "/browse?q=forecast")
    links = dict(
        (unescape(value), unescape(href))
        for href, value in re.findall(
            r'<a href="([^"]+)"[^>]*data-facet="tag" data-value="([^"]+)"', html
        )
    )
    assert links == {
        "weather": "/browse?q=forecast&tag=weather",
        "sea": "/browse?q=forecast&tag=sea",
    }
    narrowed = page(client, links["sea"])
    assert listed(narrowed) == [str(agents["tides"].pk)]
    assert 'aria-current="true"' in narrowed  # the chosen value shows as chosen
    # yes/no facets read as such: no agent is live here
    live = re.search(r'data-facet="live" data-value="(\w+)">\s*<span class="value">(\w+)<', html)
    assert live.groups() == ("false", "no")
    # the short names of the page are discovery's parameters
    assert listed(page(client, "/browse?binding=GRPC")) == []
    assert len(listed(page(client, "/browse?binding=JSONRPC"))) == 3


def test_keyset_pagination_follows_next_links(client, agents, settings, monkeypatch):
    monkeypatch.setattr("web.selectors.PAGE_SIZE", 2)
    seen, url = [], "/browse?sort=name"
    while url:
        html = page(client, url)
        seen += listed(html)
        found = re.search(r'<a href="([^"]+)" rel="next">', html)
        url = unescape(found.group(1)) if found else None
        if url:
            assert "sort=name" in url and "cursor=" in url
    names = client.get("/discover/agents?sort=name").json()["results"]
    assert seen == [row["id"] for row in names]


def test_parameters_that_are_not_filters_are_dropped(client, agents):
    html = page(client, "/browse?q=forecast&utm_source=mail&limit=1&facets=tag")
    assert len(listed(html)) == 2
    assert "utm_source" not in html and "limit=" not in html
    # discovery's own names are written in the page's short form
    assert 'href="/browse?q=forecast&amp;live=false"' in page(client, "/browse?q=forecast")
    assert "live: true" in page(client, "/browse?liveOnly=true")


def test_a_bad_parameter_is_a_400_page_that_says_why(client, agents):
    html = page(client, "/browse?sort=relevance", status=400)
    assert "relevance needs a text query" in html
    assert "This search cannot be answered" in html
    html = page(client, "/browse?protocol=SMTP", status=400)
    assert "protocol" in html


def test_the_agent_page_shows_the_card(client, agents):
    agent = agents["weather"]
    html = page(client, f"/browse/agents/{agent.pk}")
    for text in [
        "Weather Agent",
        "by Example Weather Co",
        "Forecast on request.",
        "“Please forecast this”",
        "In: text/plain · Out: application/json",
        "https://w.example/a2a/v1",
        "JSONRPC",
        f'href="/a2a/agents/{agent.pk}"',
        "not verified",
        "unsigned",
        'data-copy="card-json"',
    ]:
        assert text in html, text
    card_text = unescape(re.search(r'<pre id="card-json"[^>]*><code>(.*?)</code>', html, re.S)[1])
    served = client.get(f"/a2a/agents/{agent.pk}").json()
    assert json.loads(card_text) == served


def test_an_unknown_agent_is_an_html_404(client, db):
    html = page(client, "/browse/agents/00000000-0000-4000-8000-000000000000", status=404)
    assert "No such agent" in html
    assert "No such agent" in page(client, "/browse/agents/not-a-uuid", status=404)


def test_a_hostile_card_name_is_text_everywhere(client, db):
    agent = register(
        "mallory",
        card(
            HOSTILE_NAME,
            "Steal",
            ["<b>tag</b>"],
            host="m.example",
            description='"><script>alert(2)</script>',
        ),
    )
    for url in ["/", "/browse", "/browse?q=steal", f"/browse/agents/{agent.pk}"]:
        html = page(client, url)
        assert "<script>alert" not in html, url
        assert "<img src=x" not in html, url
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html, url


@pytest.mark.parametrize(
    "url", ["/", "/browse", "/browse?q=x", "/browse/agents/nope", "/aap/check"]
)
def test_every_page_carries_the_security_headers(client, db, url):
    response = client.get(url)
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


def test_no_template_has_inline_script_or_style():
    templates = [*ROOT.glob("templates/**/*.html"), *ROOT.glob("web/templates/**/*.html")]
    assert templates
    for path in templates:
        text = path.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), path
        assert "<style" not in text and " style=" not in text, path
        assert not re.search(r"\son[a-z]+=", text), path


def test_the_aap_report_of_a_registered_card(client, db):
    from protocols.aap.demo import dealer_demo_load

    dealer_demo_load("demo", set())
    dealer = client.get("/discover/agents?aap=true").json()["results"][0]
    html = page(client, f"/browse/agents/{dealer['id']}")
    assert '<li class="badge aap">AAP compliant</li>' in html
    assert f'href="/aap/check?agent={dealer["id"]}"' in html
    report = page(client, f"/aap/check?agent={dealer['id']}")
    assert "Report for the registered card" in report
    assert 'data-rule="card.a2a" data-status="pass"' in report  # the stored card was checked


def test_a_native_agent_without_a_card_has_a_page_too(alice, native_payload, client):
    payload = native_payload(name="Plain MCP Tool", description="Does one thing.")
    payload["endpoints"][0].update(protocol="MCP", address="https://mcp.example/mcp")
    created = alice.post("/agents", payload, format="json")
    assert created.status_code == 201, created.content
    html = page(client, f"/browse/agents/{created.json()['id']}")
    assert "Plain MCP Tool" in html and "summarize" in html
    assert "https://mcp.example/mcp" in html
    assert "card-json" not in html  # no A2A endpoint: no card


def test_an_agent_without_a_description_says_what_is_known(alice, native_payload, client):
    payload = native_payload(name="Quiet Tool")
    payload.pop("description", None)
    created = alice.post("/agents", payload, format="json")
    assert created.status_code == 201, created.content
    card_html = page(client, "/browse?q=quiet")
    assert "No description given; reached over A2A (Http), with 1 skill." in card_html
    assert "No description given" in page(client, f"/browse/agents/{created.json()['id']}")


def test_pages_share_the_api_read_limit(client, agents, settings):
    settings.RATE_LIMIT_READ = "3/day"
    for url in ["/", "/browse", f"/browse/agents/{agents['weather'].pk}"]:
        page(client, url)
    response = client.get("/browse?q=forecast")
    assert response.status_code == 429
    assert "Too many requests" in response.content.decode()
    assert int(response["Retry-After"]) >= 1
    assert client.get("/discover/agents").status_code == 429  # the same budget


def test_a_browser_gets_a_404_page_and_an_api_client_the_problem(client, db):
    html = client.get("/no/such/page", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert html.status_code == 404
    assert html["Content-Type"].startswith("text/html")
    assert "There is no page at <code>/no/such/page</code>" in html.content.decode()
    assert html["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    for accept in ["*/*", "application/json", None]:
        headers = {"HTTP_ACCEPT": accept} if accept else {}
        problem = client.get("/no/such/page", **headers)
        assert problem.status_code == 404
        assert problem["Content-Type"] == "application/problem+json"
        assert problem.json()["type"].endswith("/problems/not-found")


def test_the_trust_badge_opens_the_signals_on_the_agent_page(client, agents, settings):
    from django.db import transaction

    from registry.agents.models import Agent
    from registry.signals import agents_written_send

    agent = agents["weather"]
    settings.TRUST_WEIGHTS = {"age": 1, "verifiedDomain": 1}  # 45 of 90 days, not verified
    with transaction.atomic():
        Agent.objects.filter(pk=agent.pk).update(created_at=timezone.now() - timedelta(days=45))
        agents_written_send([agent.pk])
    link = f'<a href="/browse/agents/{agent.pk}#trust-title">Trust 25 →</a>'
    assert link in page(client, "/browse")
    html = page(client, f"/browse/agents/{agent.pk}")
    assert link in html
    assert '<h2 id="trust-title">Trust: 25 of 100</h2>' in html
    rows = re.findall(r'<tr><th scope="row">(\w+)</th><td>([^<]*)</td><td>(\d+)</td>', html)
    assert rows == [("age", "50%", "1"), ("verifiedDomain", "0%", "1")]
    assert "days: 45" in html
