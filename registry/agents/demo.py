"""The core's demo agents for `make run`, registered natively; the protocol apps add
theirs (registry.extensions.register_demo_loader)."""

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


def native_demo_load(owner: str, existing: set[str]) -> int:
    """Register the native demo agents not yet there; returns how many were added."""
    from registry.agents.serializers import AgentInputSerializer
    from registry.agents.services import agent_create

    added = 0
    for payload in NATIVE_AGENTS:
        if payload["name"] in existing:
            continue
        serializer = AgentInputSerializer(data=payload)
        serializer.is_valid(raise_exception=True)
        agent_create(owner=owner, data=serializer.to_input())
        added += 1
    return added
