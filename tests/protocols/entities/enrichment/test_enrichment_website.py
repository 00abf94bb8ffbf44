"""Website enrichment, read from a local HTTPS site through the safe fetcher: pages shaped
like real ones (JSON-LD among other markup, microdata only, RDFa, Open Graph only, markup for
another domain, a huge page, broken JSON-LD), how the website ranks among the sources, its
caching, and the opening hours it gives."""

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from protocols.entities.cards.hours import DAYS
from protocols.entities.models import EntitySource
from tests.protocols.entities.conftest import example
from tests.protocols.entities.enrichment.conftest import crawl, entity

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

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


def website_source(anon) -> dict:
    sources = entity(anon, sources="true")["sources"]
    return next(s for s in sources if s["kind"] == "website")


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
