"""The A2A app's demo agents for `make run`: registered by their cards (1.0 and 0.3)."""

CARD_AGENTS = [
    {
        "name": "Weather Agent",
        "description": "Forecasts and current conditions for any city.",
        "supportedInterfaces": [
            {
                "url": "https://weather.example.com/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            },
        ],
        "provider": {"organization": "Example Weather Co", "url": "https://weather.example.com"},
        "version": "2.1.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "forecast",
                "name": "Forecast",
                "description": "Forecast for a city.",
                "tags": ["weather", "forecast"],
                "examples": ["Weather in Paris tomorrow?"],
            },
        ],
    },
    {
        "name": "Legacy Translator",
        "description": "Translates text between languages (an A2A 0.3 card).",
        "url": "https://translator.example.org/a2a",
        "preferredTransport": "JSONRPC",
        "version": "0.9.1",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "translate",
                "name": "Translate",
                "description": "Any language to any other.",
                "tags": ["language", "translation", "nlp"],
            },
        ],
    },
]


def card_demo_load(owner: str, existing: set[str]) -> int:
    return cards_demo_register(owner, existing, CARD_AGENTS)


def cards_demo_register(owner: str, existing: set[str], cards: list[dict]) -> int:
    """Register the demo cards whose names are not in ``existing``; returns how many."""
    from a2a.services import agent_register_card

    fresh = [card for card in cards if card["name"] not in existing]
    for card in fresh:
        agent_register_card(owner=owner, card=card)
    return len(fresh)
