import pytest


@pytest.fixture
def add_agent(alice, native_payload):
    def add(name, description, capabilities=(), **overrides):
        payload = native_payload(
            name=name, description=description, capabilities=list(capabilities), **overrides
        )
        # An address of its own: agents of two owners at one address are copies of one
        # (registry.trust.duplicates), and the demo's summarizer has the payload's.
        slug = "".join(c for c in name.lower() if c.isalnum()) or "agent"
        for endpoint in payload["endpoints"]:
            if endpoint["address"].startswith("https://"):
                endpoint["address"] = f"https://{slug}.agents.example/{endpoint['name']}"
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    return add


@pytest.fixture
def population(add_agent):
    """Agents that describe what they do in words other than a person's request."""
    return {
        "tables": add_agent(
            "TableFinder",
            "Restaurant reservations at thousands of venues.",
            [
                {
                    "name": "Reserve",
                    "description": "Reserve seating for a party.",
                    "tags": ["dining"],
                }
            ],
        ),
        "scribe": add_agent(
            "Scribe Audio",
            "Audio transcription for meetings, podcasts and calls.",
            [{"name": "Transcribe", "tags": ["audio"]}],
        ),
        "pdf": add_agent(
            "TabulaX",
            "PDF table extraction into spreadsheets.",
            [{"name": "Extract tables", "tags": ["pdf"]}],
        ),
        "weather": add_agent(
            "Nimbus",
            "Meteorological forecasts and severe storm alerts.",
            [{"name": "Forecast", "tags": ["meteorology"]}],
        ),
        "flights": add_agent(
            "SkyFare",
            "Airline ticket search and booking across carriers.",
            [{"name": "Search fares", "tags": ["travel"]}],
        ),
    }
