"""Entity-card formats and validation: every problem with its path."""

import pytest

from protocols.entities.cards.validation import card_format, card_validate, registration_validate
from tests.protocols.entities.conftest import example

EDP_EXAMPLES = [
    ("edp-v0.1-minimal", "edp-0.1", "mybusiness.com"),
    ("edp-v0.1-multi-mcp", "edp-0.1", "lepetitzinc.fr"),
    ("edp-v0.1-with-verification", "edp-0.1", "lepetitzinc.fr"),
    ("edp-v0.1-dockai-co-entity-card", "edp-0.1", "dockai.co"),
    ("edp-v0.2-multi-location", "edp-0.2", "acme-bistro.com"),
]


def paths(report) -> list[str]:
    return [p.path for p in report.errors]


@pytest.mark.parametrize(("name", "fmt", "domain"), EDP_EXAMPLES)
def test_the_official_edp_examples_are_valid(name, fmt, domain):
    report = card_validate(example(name), host=domain)
    assert report.errors == []
    assert (report.format, report.domain) == (fmt, domain)


def test_the_official_provider_registration_is_valid():
    assert registration_validate(example("edp-v0.1-provider-registration")) == []


def test_the_a2e_home_page_example_fails_a2e_0_1_at_its_version():
    report = card_validate(example("a2e-restaurant"))
    assert report.format == "a2e-0.1"
    assert paths(report) == ["a2e"]


def test_a_valid_a2e_card_says_what_its_entity_is():
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    card["entity"]["location"] = {"city": "Paris", "lat": 48.85, "lng": 2.33}
    card["mcps"].append({"endpoint": "https://b.example", "capabilities": ["menu"], "priority": 1})
    report = card_validate(card, host="lepetitzinc.fr")
    assert report.ok
    (entity,) = report.entities
    assert (entity.name, entity.category, entity.city, entity.lat) == (
        "Le Petit Zinc",
        "restaurant",
        "Paris",
        48.85,
    )
    # A2E: priority 1 beats no priority (lowest preference).
    assert [m.endpoint for m in entity.mcps] == ["https://b.example", "https://mcp.zenchef.com"]


def test_edp_priority_higher_is_preferred_and_the_order_means_the_same_for_both():
    report = card_validate(example("edp-v0.1-multi-mcp"))
    orders = [(m.provider, m.priority, m.order) for m in report.entities[0].mcps]
    assert orders == [
        ("booking-provider", 10, 90),
        ("payment-provider", 10, 90),
        ("delivery-provider", 5, 95),
    ]


@pytest.mark.parametrize(
    ("card", "message"),
    [
        ({"name": "An A2A card", "skills": []}, "is not an entity card"),
        ({"a2e": "0.1", "schema_version": "0.1.0"}, "is ambiguous"),
        ({"schema_version": "0.1.0", "mcps": [], "entities": []}, "is ambiguous"),
        ([], "must be a JSON object"),
    ],
)
def test_unknown_and_ambiguous_documents_are_refused(card, message):
    fmt, problem = card_format(card)
    assert fmt is None
    assert problem.path == "$"
    assert message in problem.message
    assert not card_validate(card).ok


def test_every_problem_is_reported_with_its_path():
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    card["entity"]["category"] = "bakery"
    card["entity"]["location"] = {"lat": 91, "lng": 2}
    card["mcps"] = [
        {"endpoint": "http://mcp.example", "capabilities": ["Book-Table"]},
        {"endpoint": "https://mcp.example", "capabilities": []},
    ]
    assert paths(card_validate(card)) == [
        "entity.category",
        "entity.location.lat",
        "mcps[0].capabilities[0]",
        "mcps[0].endpoint",
        "mcps[1].capabilities",
    ]


def test_edp_namespaced_capabilities_read_provider_colon_capability():
    card = example("edp-v0.1-minimal")
    card["mcps"][0]["capabilities"] = ["acme:custom-feature", "acme:", "a:b:c", "reservations"]
    report = card_validate(card)
    assert paths(report) == ["mcps[0].capabilities[1]", "mcps[0].capabilities[2]"]


def test_the_domain_must_be_the_host_that_served_the_card():
    report = card_validate(example("edp-v0.1-minimal"), host="other.example")
    assert [(p.path, p.message) for p in report.errors] == [
        ("domain", "is mybusiness.com, but the card was served by other.example")
    ]
    a2e = example("a2e-restaurant")
    a2e["a2e"] = "0.1"
    assert paths(card_validate(a2e, host="other.example")) == ["entity.domain"]


def test_edp_0_2_paths_are_unique_and_coordinates_in_range():
    card = example("edp-v0.2-multi-location")
    card["entities"][1]["path"] = "/paris"
    card["entities"][1]["location"]["coordinates"]["lng"] = 181
    assert paths(card_validate(card)) == [
        "entities[1].location.coordinates.lng",
        "entities[1].path",
    ]


def test_registration_problems_have_paths():
    payload = example("edp-v0.1-provider-registration")
    payload["provider"]["endpoint"] = "http://insecure.example"
    payload["entities"][1]["entity_id"] = payload["entities"][0]["entity_id"]
    payload["entities"][2]["location"]["country"] = "France"
    assert [p.path for p in registration_validate(payload)] == [
        "entities[2].location.country",
        "provider.endpoint",
        "entities[1].entity_id",
    ]


def a2e_at(location: dict) -> dict:
    card = example("a2e-restaurant")
    card["a2e"] = "0.1"
    card["entity"]["location"] = location
    return card


def test_an_a2e_card_with_edp_coordinates_is_read_with_a_warning_naming_a2e_s_shape():
    report = card_validate(a2e_at({"city": "Paris", "coordinates": {"lat": 48.85, "lng": 2.33}}))
    assert report.ok
    (entity,) = report.entities
    assert (entity.lat, entity.lng) == (48.85, 2.33)
    (warning,) = report.warnings
    assert warning.path == "entity.location.coordinates"
    assert "location.lat and location.lng" in warning.message


@pytest.mark.parametrize(
    ("location", "path"),
    [
        ({"coordinates": {"lat": 148.85, "lng": 2.33}}, "entity.location.coordinates.lat"),
        ({"coordinates": {"lat": 48.85}}, "entity.location.coordinates.lng"),
        ({"coordinates": "48.85,2.33"}, "entity.location.coordinates"),
        (
            {"lat": 1.0, "lng": 2.0, "coordinates": {"lat": 48.85, "lng": 2.33}},
            "entity.location.coordinates",
        ),
    ],
)
def test_a2e_coordinates_that_cannot_be_read_are_refused_at_their_path(location, path):
    report = card_validate(a2e_at(location))
    assert not report.ok
    assert path in paths(report)
