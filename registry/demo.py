"""A small demo population for `make run`: native agents, card agents, one AAP dealer."""

DEMO_OWNER = "demo"

NATIVE_AGENTS = [
    {
        "name": "Summarizer",
        "description": "Summarizes long documents into short briefs.",
        "capabilities": [
            {"name": "summarize", "description": "Summarize a document.", "tags": ["nlp", "text"]},
        ],
        "endpoints": [
            {
                "name": "primary",
                "transport": "Http",
                "protocol": "A2A",
                "address": "https://summarizer.example.com/a2a",
                "livenessModel": "Persistent",
                "heartbeatIntervalSeconds": 30,
            },
        ],
    },
    {
        "name": "Invoice Extractor",
        "description": "Extracts line items from invoices; jobs arrive over a queue.",
        "capabilities": [
            {
                "name": "extract-invoice",
                "description": "Line items from a PDF invoice.",
                "tags": ["documents", "finance"],
            },
        ],
        "endpoints": [
            {
                "name": "jobs",
                "transport": "Amqp",
                "protocol": "A2A",
                "address": "invoices.extract",
                "livenessModel": "Ephemeral",
                "ttlSeconds": 300,
            },
            {
                "name": "tools",
                "transport": "Http",
                "protocol": "MCP",
                "address": "https://invoices.example.com/mcp",
            },
        ],
    },
]

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
    {
        "name": "Demo Motors Dealer Agent",
        "description": "Dealer agent for Demo Motors: inventory, vehicle detail, dealer "
        "profile and consented leads, under the Auto Agent Protocol v0.1 profile.",
        "version": "1.0.0",
        "provider": {"organization": "Demo Motors", "url": "https://demo-motors.example.com"},
        "supported_interfaces": [
            {
                "url": "https://demo-motors.example.com/a2a",
                "protocol_binding": "JSONRPC",
                "protocol_version": "1.0",
            },
        ],
        "capabilities": {
            "streaming": False,
            "extensions": [
                {
                    "uri": "https://autoagentprotocol.org/extensions/a2a-automotive-retail/v0.1",
                    "description": "Auto Agent Protocol v0.1, A2A Automotive Retail Profile.",
                    "required": True,
                    "params": {
                        "manifest_url": "https://demo-motors.example.com/.well-known/"
                        "auto-agent-contract.json",
                        "aap_skill_ids": [
                            "dealer.information",
                            "inventory.facets",
                            "inventory.search",
                            "inventory.vehicle",
                            "lead.submit",
                        ],
                        "implemented_skills": [
                            "dealer.information",
                            "inventory.search",
                            "lead.submit",
                        ],
                    },
                }
            ],
        },
        "default_input_modes": ["application/json", "text/plain"],
        "default_output_modes": ["application/json", "text/plain"],
        "skills": [
            {
                "id": "dealer.information",
                "name": "Dealer Information",
                "description": "Dealership profile: address, hours, brands, contacts.",
                "tags": ["dealer", "profile"],
            },
            {
                "id": "inventory.search",
                "name": "Inventory Search",
                "description": "Search new and used vehicles by make, model, price, mileage.",
                "tags": ["inventory", "search", "vehicles"],
            },
            {
                "id": "lead.submit",
                "name": "Submit Lead",
                "description": "Submit a consented lead with optional trade-in and appointment.",
                "tags": ["lead", "consent"],
            },
        ],
    },
]
