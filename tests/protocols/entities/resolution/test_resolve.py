"""The resolution API: /v1/resolve (text, location, capabilities, level) and /v1/nearby."""

import pytest

from protocols.entities.registration.bulk import cards_bulk_store
from protocols.entities.registration.selectors import distance_m

pytestmark = pytest.mark.django_db


def a2e(domain: str, name: str, lat: float, lng: float, city: str, caps: list[str], **entity):
    return (
        domain,
        {
            "a2e": "0.1",
            "entity": {
                "domain": domain,
                "name": name,
                "category": entity.pop("category", "restaurant"),
                "location": {"city": city, "lat": lat, "lng": lng},
                **entity,
            },
            "mcps": [{"endpoint": f"https://mcp.{domain}", "capabilities": caps}],
        },
    )


@pytest.fixture
def paris():
    cards_bulk_store(
        owner="alice",
        cards=[
            a2e("zinc.example", "Le Petit Zinc", 48.8534, 2.3328, "Paris", ["reservations"]),
            a2e("flore.example", "Café de Flore", 48.8541, 2.3326, "Paris", ["menu"]),
            a2e(
                "spa.example",
                "Zinc Spa",
                48.8600,
                2.3500,
                "Paris",
                ["reservations"],
                category="beauty",
                description="Massages near the Louvre",
            ),
            a2e("lyon.example", "Zinc Lyonnais", 45.7640, 4.8357, "Lyon", ["reservations"]),
        ],
    )


def names(response) -> list[str]:
    return [r["entity"]["name"] for r in response.json()["results"]]


def test_resolve_ranks_by_the_words_found_and_says_how_confident(paris, anon):
    response = anon.get("/v1/resolve?query=petit zinc")
    assert response.status_code == 200
    results = response.json()["results"]
    assert results[0]["entity"]["name"] == "Le Petit Zinc"
    # Ties (one word of two, in the name) in no particular order.
    assert sorted(r["entity"]["name"] for r in results[1:]) == ["Zinc Lyonnais", "Zinc Spa"]
    assert [r["confidence"] for r in results] == [1.0, 0.5, 0.5]
    assert results[0]["mcps"][0]["endpoint"] == "https://mcp.zinc.example"
    assert results[0]["entity"]["verification_level"] == 1


def test_resolve_folds_accents_and_reads_category_and_description(paris, anon):
    assert names(anon.get("/v1/resolve?query=cafe")) == ["Café de Flore"]
    assert names(anon.get("/v1/resolve?query=beauty")) == ["Zinc Spa"]
    assert names(anon.get("/v1/resolve?query=louvre")) == ["Zinc Spa"]


def test_resolve_filters_by_location_capabilities_and_level(paris, anon):
    assert names(anon.get("/v1/resolve?query=zinc&location=lyon")) == ["Zinc Lyonnais"]
    near = anon.get("/v1/resolve?query=zinc&location=48.85,2.33")
    assert sorted(names(near)) == ["Le Petit Zinc", "Zinc Spa"]
    assert names(anon.get("/v1/resolve?query=paris&capabilities=menu")) == ["Café de Flore"]
    assert names(anon.get("/v1/resolve?query=zinc&min_verification=2")) == []


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("", "query"),
        ("query=zinc&min_verification=3", "min_verification"),
        ("query=a&limit=0", "limit"),
    ],
)
def test_bad_resolve_parameters_are_400_naming_them(anon, query, parameter):
    response = anon.get(f"/v1/resolve?{query}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"] == parameter


def test_nearby_is_nearest_first_with_distances(paris, anon):
    response = anon.get("/v1/nearby?lat=48.8535&lng=2.3330&radius=2000")
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["entity"]["name"] for r in results] == ["Le Petit Zinc", "Café de Flore", "Zinc Spa"]
    distances = [r["distance_m"] for r in results]
    assert distances == sorted(distances)
    assert distances[0] == pytest.approx(distance_m(48.8535, 2.3330, 48.8534, 2.3328), abs=0.1)
    assert names(anon.get("/v1/nearby?lat=48.8535&lng=2.3330")) == [
        "Le Petit Zinc",
        "Café de Flore",
    ]
    assert names(anon.get("/v1/nearby?lat=48.8535&lng=2.3330&capabilities=menu")) == [
        "Café de Flore"
    ]
    assert names(anon.get("/v1/nearby?lat=45.764&lng=4.8357&radius=100")) == ["Zinc Lyonnais"]


def test_nearby_crosses_the_antimeridian(anon):
    cards_bulk_store(
        owner="alice",
        cards=[a2e("fiji.example", "Taveuni Dive", -16.8, 179.99, "Taveuni", ["reservations"])],
    )
    assert names(anon.get("/v1/nearby?lat=-16.8&lng=-179.99&radius=5000")) == ["Taveuni Dive"]


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("lng=2", "lat"),
        ("lat=91&lng=2", "lat"),
        ("lat=48&lng=-181", "lng"),
        ("lat=abc&lng=2", "lat"),
        ("lat=nan&lng=2", "lat"),
        ("lat=48&lng=2&radius=0", "radius"),
        ("lat=48&lng=2&radius=1e9", "radius"),
    ],
)
def test_bad_coordinates_are_400_naming_the_parameter(anon, query, parameter):
    response = anon.get(f"/v1/nearby?{query}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == parameter


def test_a_common_word_still_finds_the_best_entities_first(anon):
    cards = [
        a2e(f"d{n}.example", f"Bistro {n}", 48.8, 2.3, "Paris", ["menu"], description="zinc bar")
        for n in range(260)
    ]
    cards.append(a2e("best.example", "Zinc", 48.8, 2.3, "Paris", ["menu"]))
    cards_bulk_store(owner="alice", cards=cards)
    results = anon.get("/v1/resolve?query=zinc&limit=3").json()["results"]
    assert results[0]["entity"]["name"] == "Zinc"
    assert [r["confidence"] for r in results] == [1.0, 0.333, 0.333]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/resolve?query=bistro&location=pa%00ris", "location"),
        ("/v1/resolve?query=x&capabilities=a%00", "capabilities"),
        ("/v1/resolve?query=bis%00tro", "query"),
        ("/v1/nearby?lat=1&lng=1&capabilities=a%00", "capabilities"),
        ("/v1/resolve/domain/zinc.example?path=/a%00", "path"),
    ],
)
def test_a_nul_character_in_a_lookup_parameter_is_a_400_naming_it(anon, paris, path, field):
    # PostgreSQL refuses NUL in a query's text: a 500 there before.
    response = anon.get(path)
    assert response.status_code == 400, response.content[:300]
    assert [e["path"] for e in response.json()["errors"]] == [field]
