"""The markup reader alone, on hostile pages: what it reads costs bounded time, and what it
gives is checked."""

from protocols.entities.enrichment.markup import MAX_RDFA_ELEMENTS, markup_read


def read(html: str) -> tuple[dict, str]:
    return markup_read(html.encode(), page_url="https://zinc.example/", domain="zinc.example")


RDFA = (
    '<div vocab="https://schema.org/" typeof="Restaurant"><span property="name">Zinc</span></div>'
)


def test_a_page_flooded_with_rdfa_is_not_read_as_rdfa():
    assert read(f"<html><body>{RDFA}</body></html>")[1] == "rdfa"
    flood = "<span property='name'>x</span>" * MAX_RDFA_ELEMENTS
    assert read(f"<html><body>{RDFA}{flood}</body></html>") == ({}, "")


def test_values_out_of_range_or_of_the_wrong_type_are_dropped():
    item = (
        '{"@type": "Restaurant", "name": ["Zinc", "Other"], "telephone": {"x": 1},'
        ' "geo": {"latitude": 91, "longitude": 2}, "address": {"addressCountry": "France"},'
        ' "sameAs": ["ftp://zinc.example", "https://zinc.example/about"]}'
    )
    values, syntax = read(
        f'<html><head><script type="application/ld+json">{item}</script></head></html>'
    )
    assert syntax == "json-ld"
    assert values == {
        "name": "Zinc",
        "category": "restaurant",
        "website": "https://zinc.example/",
        "same_as": ["https://zinc.example/about"],
    }


def test_a_www_url_is_the_same_domain_and_a_subdomain_of_another_is_not():
    page = (
        '<script type="application/ld+json">{"@type": "Bakery", "name": "B", "url": "%s"}</script>'
    )
    assert read(page % "https://www.zinc.example/")[0]["category"] == "restaurant"
    assert read(page % "https://zinc.example.evil.test/") == ({}, "")
