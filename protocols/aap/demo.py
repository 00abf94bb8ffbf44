"""The AAP app's demo agent for `make run`: a dealer whose card declares AAP v0.1."""

from protocols.a2a.demo import cards_demo_register

DEALER_CARD = {
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
}


def dealer_demo_load(owner: str, existing: set[str]) -> int:
    return cards_demo_register(owner, existing, [DEALER_CARD])
