"""The entities app's demo entities for `make run`: an A2E restaurant and an EDP 0.2
bistro with two locations, stored as if their domains had served these cards (no network)."""

from protocols.entities.registration.bulk import cards_bulk_store

DEMO_CARDS = [
    (
        "demo-trattoria.example.com",
        {
            "a2e": "0.1",
            "entity": {
                "domain": "demo-trattoria.example.com",
                "name": "Demo Trattoria",
                "category": "restaurant",
                "description": "Neighbourhood Italian restaurant: fresh pasta, wood-fired pizza.",
                "location": {
                    "address": "12 Rue de la Demo",
                    "city": "Paris",
                    "postal_code": "75006",
                    "country": "FR",
                    "lat": 48.8530,
                    "lng": 2.3330,
                },
            },
            "mcps": [
                {
                    "endpoint": "https://mcp.demo-bookings.example.com",
                    "capabilities": ["reservations", "availability", "menu"],
                    "entity_ref": "trattoria-75006",
                    "priority": 1,
                },
                {
                    "endpoint": "https://mcp.demo-delivery.example.com",
                    "capabilities": ["ordering", "payments"],
                    "priority": 2,
                },
            ],
        },
    ),
    (
        "demo-bistro.example.com",
        {
            "schema_version": "0.2.0",
            "domain": "demo-bistro.example.com",
            "entities": [
                {
                    "name": "Demo Bistro Lyon",
                    "path": "/lyon",
                    "location": {
                        "city": "Lyon",
                        "country": "FR",
                        "coordinates": {"lat": 45.7640, "lng": 4.8357},
                    },
                    "mcps": [
                        {
                            "provider": "demo-bookings",
                            "endpoint": "https://mcp.demo-bookings.example.com",
                            "entity_id": "bistro-lyon",
                            "capabilities": ["reservations", "availability"],
                            "priority": 10,
                        }
                    ],
                },
                {
                    "name": "Demo Bistro Marseille",
                    "path": "/marseille",
                    "location": {
                        "city": "Marseille",
                        "country": "FR",
                        "coordinates": {"lat": 43.2965, "lng": 5.3698},
                    },
                    "mcps": [
                        {
                            "provider": "demo-bookings",
                            "endpoint": "https://mcp.demo-bookings.example.com",
                            "entity_id": "bistro-marseille",
                            "capabilities": ["reservations", "availability"],
                            "priority": 10,
                        }
                    ],
                },
            ],
        },
    ),
]


def entities_demo_load(owner: str, existing: set[str]) -> int:
    """Store the demo cards whose domains are not known yet; returns how many entities."""
    return cards_bulk_store(owner=owner, cards=DEMO_CARDS)
