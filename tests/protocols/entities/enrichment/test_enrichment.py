"""Website enrichment and MCP server cards, read from a local HTTPS site through the safe
fetcher: pages shaped like real ones (JSON-LD among other markup, microdata only, RDFa, Open
Graph only, markup for another domain, a huge page, broken JSON-LD) and server cards (valid,
in both drafts' shapes, invalid, absent)."""

import json
from datetime import datetime
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command

from protocols.entities.cards.hours import DAYS
from protocols.entities.models import EntitySource, McpServerCard
from registry.liveness.tasks import endpoints_probe
from tests.protocols.entities.conftest import example, publish

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

SERVER_CARD = "/.well-known/mcp/server-card.json"

RESTAURANT_JSON_LD = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "WebSite", "url": "https://lepetitzinc.fr/", "name": "Le Petit Zinc - site"},
        {
            "@type": "Restaurant",
            "@id": "https://lepetitzinc.fr/#restaurant",
            "name": "Le Petit Zinc",
            "description": "Brasserie Art nouveau, fruits de mer.",
            "url": "https://lepetitzinc.fr/",
            "telephone": "+33 1 42 86 61 00",
            "servesCuisine": "French",
            "address": {
                "@type": "PostalAddress",
                "streetAddress": "11 Rue Saint-Benoît",
                "addressLocality": "Paris",
                "postalCode": "75006",
                "addressCountry": "FR",
            },
            "geo": {"@type": "GeoCoordinates", "latitude": "48.8547", "longitude": 2.3331},
            "openingHoursSpecification": [
                {
                    "@type": "OpeningHoursSpecification",
                    "dayOfWeek": [
                        "https://schema.org/Monday",
                        "Tuesday",
                        "Wednesday",
                        "Thursday",
                        "Friday",
                        "Saturday",
                        "Sunday",
                    ],
                    "opens": "00:00",
                    "closes": "23:59",
                }
            ],
            "sameAs": ["https://www.instagram.com/lepetitzinc", "javascript:alert(1)"],
        },
    ],
}


def page(head: str = "", body: str = "", prefix: str = "") -> bytes:
    """A page like a restaurant's site builder makes: scripts, styles, a nav, a footer."""
    head_attributes = f' prefix="{prefix}"' if prefix else ""
    return f"""<!doctype html>
<html lang="fr"><head{head_attributes}><meta charset="utf-8"><title>Le Petit Zinc</title>
<link rel="stylesheet" href="/style.css"><script src="/app.js" defer></script>
<script>window.dataLayer = window.dataLayer || [];</script>
{head}</head>
<body><nav><a href="/">Accueil</a> <a href="/menu">Carte</a></nav>
<main><h1>Le Petit Zinc</h1><p>Réservez en ligne.</p>{body}</main>
<footer>© 2026</footer></body></html>""".encode()


def json_ld(document) -> str:
    return f'<script type="application/ld+json">{json.dumps(document)}</script>'


def serve_page(server, body: bytes, path: str = "/", **headers) -> None:
    server.route(path, 200, {"Content-Type": "text/html; charset=utf-8", **headers}, body)


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


def website_source(anon) -> dict:
    sources = entity(anon, sources="true")["sources"]
    return next(s for s in sources if s["kind"] == "website")


def crawl(*options) -> str:
    out = StringIO()
    call_command("crawl_entities", "--domain", "lepetitzinc.fr", *options, stdout=out)
    return out.getvalue()


def test_json_ld_among_other_markup_gives_the_facts(https_server, register, anon):
    broken = '<script type="application/ld+json">{"@type": "Restaurant", "name": </script>'
    serve_page(https_server, page(head=broken + json_ld(RESTAURANT_JSON_LD)))
    register()
    found = entity(anon)
    assert found["name"] == "Le Petit Zinc"
    assert found["category"] == "restaurant"
    assert found["description"] == "Brasserie Art nouveau, fruits de mer."
    assert found["location"] == {
        "address": "11 Rue Saint-Benoît",
        "city": "Paris",
        "postal_code": "75006",
        "country": "FR",
        "coordinates": {"lat": 48.8547, "lng": 2.3331},
    }
    assert found["phone"] == "+33 1 42 86 61 00"
    assert found["hours"] == [
        {"days": ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"], "opens": "00:00", "closes": "23:59"}
    ]
    assert (found["timezone"], found["openNow"]) == ("Europe/Paris", True)
    assert found["same_as"] == ["https://www.instagram.com/lepetitzinc"]
    source = website_source(anon)
    assert source["url"] == https_server.url("/", host="lepetitzinc.fr")
    assert source["status"] == "ok" and "json-ld" in source["detail"]
    # Found by the words and the place its website gave.
    assert anon.get("/v1/resolve?query=fruits+de+mer").json()["results"]
    near = anon.get("/v1/nearby?lat=48.8547&lng=2.3331&radius=50").json()["results"]
    assert [r["entity"]["name"] for r in near] == ["Le Petit Zinc"]
    assert anon.get("/v1/resolve?query=zinc&open_now=true").json()["results"]


def test_microdata_only(https_server, register, anon):
    serve_page(
        https_server,
        page(
            body="""<div itemscope itemtype="https://schema.org/BarOrPub">
  <span itemprop="name">Zinc Bar</span>
  <div itemprop="address" itemscope itemtype="https://schema.org/PostalAddress">
    <span itemprop="streetAddress">1 Rue du Bac</span>
    <span itemprop="addressLocality">Lyon</span></div>
  <span itemprop="telephone">+33 4 00 00 00 00</span>
  <meta itemprop="openingHours" content="Mo-Fr 18:00-02:00">
</div>"""
        ),
    )
    register()
    found = entity(anon)
    assert (found["name"], found["category"], found["location"]["city"]) == (
        "Zinc Bar",
        "restaurant",
        "Lyon",
    )
    assert found["phone"] == "+33 4 00 00 00 00"
    assert found["hours"] == [
        {"days": ["Mo", "Tu", "We", "Th", "Fr"], "opens": "18:00", "closes": "02:00"}
    ]
    assert "microdata" in website_source(anon)["detail"]


def test_rdfa(https_server, register, anon):
    serve_page(
        https_server,
        page(
            body="""<div vocab="https://schema.org/" typeof="Hotel">
  <span property="name">Hôtel du Zinc</span>
  <div property="address" typeof="PostalAddress"><span property="addressLocality">Nice</span>
  </div></div>"""
        ),
    )
    register()
    found = entity(anon)
    assert (found["name"], found["category"], found["location"]["city"]) == (
        "Hôtel du Zinc",
        "hotel",
        "Nice",
    )


def test_open_graph_is_the_fallback(https_server, register, anon):
    serve_page(
        https_server,
        page(
            head="""<meta property="og:type" content="restaurant.restaurant">
<meta property="og:site_name" content="Le Petit Zinc (OG)">
<meta property="og:description" content="Brasserie parisienne.">
<meta property="og:url" content="https://lepetitzinc.fr/">
<meta property="place:location:latitude" content="48.8547">
<meta property="place:location:longitude" content="2.3331">""",
            prefix="og: http://ogp.me/ns# place: http://ogp.me/ns/place#",
        ),
    )
    register()
    found = entity(anon)
    assert found["name"] == "Le Petit Zinc (OG)"
    assert found["location"]["coordinates"] == {"lat": 48.8547, "lng": 2.3331}
    assert "opengraph" in website_source(anon)["detail"]


def test_markup_naming_another_domain_is_ignored(https_server, register, anon):
    other = {
        "@context": "https://schema.org",
        "@type": "Restaurant",
        "name": "Someone Else's Bistro",
        "url": "https://other.example/",
        "address": {"@type": "PostalAddress", "addressLocality": "Berlin"},
    }
    og = '<meta property="og:title" content="Elsewhere"><meta property="og:url" content="https://other.example/">'
    serve_page(https_server, page(head=json_ld(other) + og))
    register()
    found = entity(anon)
    assert found["name"] == "lepetitzinc.fr"
    assert found["location"]["city"] is None
    assert website_source(anon)["status"] == "no-markup"


def test_broken_json_ld_alone_gives_nothing_and_breaks_nothing(https_server, register, anon):
    serve_page(https_server, page(head='<script type="application/ld+json">{"@type": </script>'))
    register()
    assert entity(anon)["name"] == "lepetitzinc.fr"
    assert website_source(anon)["status"] == "no-markup"


def test_a_huge_page_is_not_read_and_keeps_the_other_sources_facts(
    https_server, register, anon, alice, settings
):
    settings.ENTITY_WEBSITE_MAX_BYTES = 64 * 1024
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    alice.post("/v1/provider/register", payload, format="json")
    filler = "<p>" + "Carte du jour. " * 50 + "</p>"
    serve_page(https_server, page(head=json_ld(RESTAURANT_JSON_LD), body=filler * 200))
    register()
    found = entity(anon)
    assert (found["name"], found["phone"]) == ("Le Petit Zinc", None)  # the provider's name
    source = website_source(anon)
    assert (source["status"], source["values"]) == ("error", {})
    assert "larger than 65536 bytes" in source["detail"]


def test_the_website_outranks_a_provider_and_leaving_gives_its_facts_back(
    https_server, register, anon, alice
):
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    payload["entities"][0]["name"] = "Petit Zinc (provider)"
    alice.post("/v1/provider/register", payload, format="json")
    serve_page(https_server, page(head=json_ld(RESTAURANT_JSON_LD)), ETag='"p1"')
    register()
    assert entity(anon)["name"] == "Le Petit Zinc"
    kinds = [s["kind"] for s in entity(anon, sources="true")["sources"]]
    assert kinds == ["card", "website", "provider-claim"]
    # Unchanged (304): nothing moves, and the crawl asked with the page's ETag.
    https_server.route("/", 304, {"ETag": '"p1"'})
    crawl()
    page_requests = [r for r in https_server.requests if r.path == "/"]
    assert page_requests[-1].headers["If-None-Match"] == '"p1"'
    assert entity(anon)["name"] == "Le Petit Zinc"
    # The page is gone: only its facts go; the provider's name is back.
    del https_server.routes["/"]
    assert "1 changed by their websites" in crawl()
    found = entity(anon, sources="true")
    assert found["name"] == "Petit Zinc (provider)"
    assert found["phone"] is None
    assert [s["kind"] for s in found["sources"]] == ["card", "provider-claim"]


def test_cache_control_max_age_spares_the_page_until_it_passes(https_server, register, anon):
    serve_page(
        https_server, page(head=json_ld(RESTAURANT_JSON_LD)), **{"Cache-Control": "max-age=86400"}
    )
    register()
    before = len([r for r in https_server.requests if r.path == "/"])
    crawl()
    assert len([r for r in https_server.requests if r.path == "/"]) == before
    assert EntitySource.objects.get(kind="website").next_read_at is not None
    crawl("--enrich")  # reads it now, whatever its max-age
    assert len([r for r in https_server.requests if r.path == "/"]) == before + 1


VALID_CARDS = {
    # SEP-1649 as first drafted: serverInfo, and a top-level version that is the card's own.
    "serverInfo": {
        "$schema": "https://static.modelcontextprotocol.io/schemas/mcp-server-card/v1.json",
        "version": "1.0",
        "protocolVersion": "2025-06-18",
        "serverInfo": {"name": "zinc-bookings", "title": "Zinc bookings", "version": "2.4.1"},
        "transport": {"type": "streamable-http", "endpoint": "/mcp"},
        "capabilities": {"tools": {"listChanged": True}},
        "tools": [
            {
                "name": "book_table",
                "description": "Book a table.",
                "inputSchema": {"type": "object"},
            },
            {"name": "list_slots", "description": "Free slots for a party size and a day."},
        ],
    },
    # Later drafts: name and version at the top.
    "top-level": {
        "name": "zinc-bookings",
        "version": "2.4.1",
        "transports": [{"type": "streamable-http", "url": "/mcp"}],
        "tools": [{"name": "book_table", "description": "Book a table."}, {"name": "list_slots"}],
    },
}


@pytest.mark.parametrize("shape", sorted(VALID_CARDS))
def test_a_server_cards_tools_become_capabilities(https_server, register, anon, shape):
    https_server.route(
        SERVER_CARD,
        200,
        {"Content-Type": "application/mcp-server-card+json"},
        json.dumps(VALID_CARDS[shape]).encode(),
    )
    register()
    card = entity(anon)["mcps"][0]["serverCard"]
    assert (card["status"], card["name"], card["version"]) == ("found", "zinc-bookings", "2.4.1")
    assert [t["name"] for t in card["tools"]] == ["book_table", "list_slots"]
    found = anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json()["results"]
    assert found[0]["mcps"][0]["serverCard"]["status"] == "found"
    agents = anon.get("/discover/agents?protocol=MCP&capability=book_table").json()["results"]
    assert [a["entity"]["domain"] for a in agents] == ["lepetitzinc.fr"]
    # Read, never called: no request went to the MCP endpoint itself.
    assert not [r for r in https_server.requests if r.path == "/mcp"]


@pytest.mark.parametrize(
    ("status", "headers", "body", "reason"),
    [
        ("absent", {}, None, "404"),
        ("invalid", {"Content-Type": "application/json"}, b"{not json", "not valid JSON"),
        ("invalid", {"Content-Type": "text/html"}, b"<html></html>", "not JSON"),
        (
            "invalid",
            {"Content-Type": "application/json"},
            json.dumps({"serverInfo": {"version": "1"}, "tools": [{"description": "x"}]}).encode(),
            "serverInfo.name (or name) is required",
        ),
    ],
    ids=["absent", "broken-json", "html", "no-name"],
)
def test_a_missing_or_invalid_server_card_says_why(
    https_server, register, anon, status, headers, body, reason
):
    if body is not None:
        https_server.route(SERVER_CARD, 200, headers, body)
    register()
    card = entity(anon)["mcps"][0]["serverCard"]
    assert card["status"] == status
    assert reason in card["reason"]
    assert anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json() == {
        "results": []
    }


def test_one_origins_server_card_is_read_once_per_ttl(https_server, register, anon):
    https_server.json(SERVER_CARD, json.dumps(VALID_CARDS["top-level"]).encode())
    register()
    crawl()
    assert len([r for r in https_server.requests if r.path == SERVER_CARD]) == 1
    McpServerCard.objects.update(next_read_at="2000-01-01T00:00:00Z")
    https_server.json(SERVER_CARD, json.dumps({"name": "zinc-bookings", "tools": []}).encode())
    crawl()
    assert entity(anon)["mcps"][0]["serverCard"]["tools"] == []
    assert anon.get("/v1/resolve?query=lepetitzinc&capabilities=book_table").json() == {
        "results": []
    }


def test_open_now_true_leaves_out_the_closed(https_server, register, anon):
    tomorrow = DAYS[(datetime.now(ZoneInfo("Europe/Paris")).weekday() + 1) % 7]
    closed = json.loads(json.dumps(RESTAURANT_JSON_LD))
    del closed["@graph"][1]["openingHoursSpecification"]
    closed["@graph"][1]["openingHours"] = f"{tomorrow} 00:00-23:59"
    serve_page(https_server, page(head=json_ld(closed)))
    register()
    assert entity(anon)["openNow"] is False
    assert anon.get("/v1/resolve?query=zinc&open_now=true").json()["results"] == []
    near = "/v1/nearby?lat=48.8547&lng=2.3331"
    assert anon.get(f"{near}&open_now=true").json()["results"] == []
    assert [r["entity"]["name"] for r in anon.get(near).json()["results"]] == ["Le Petit Zinc"]


def test_an_agents_mcp_endpoint_gets_its_server_card_read_with_its_probe(
    network, https_server, alice, native_payload
):
    https_server.json(SERVER_CARD, json.dumps(VALID_CARDS["serverInfo"]).encode())
    https_server.route("/mcp", 405, {}, b"")  # an MCP server answers a GET with 405
    payload = native_payload(
        name="Booking tools",
        endpoints=[
            {
                "name": "mcp",
                "transport": "Http",
                "protocol": "MCP",
                "address": https_server.url("/mcp", host="mybusiness.com"),
            }
        ],
    )
    assert alice.post("/agents", payload, format="json").status_code == 201
    assert endpoints_probe.delay().get() == 1
    card = McpServerCard.objects.get()
    assert (card.status, card.name, card.version) == ("found", "zinc-bookings", "2.4.1")
    assert [r.method for r in https_server.requests if r.path == "/mcp"] == ["GET"]
