"""Card documents for tests, built with a2a-sdk where the SDK is what produces them."""

import copy
from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer, create_signature_verifier
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf.json_format import MessageToDict, ParseDict

from tests.conftest import BASE_CARD


def ec_key_pair() -> tuple[Any, Any]:
    private = ec.generate_private_key(ec.SECP256R1())
    return private, private.public_key()


def signed_card(private_key, *, kid: str = "key-1", extra: dict | None = None) -> dict:
    """A 1.0 card signed with the SDK signer, then unknown members added (not covered)."""
    message = ParseDict(copy.deepcopy(BASE_CARD), AgentCard())
    signer = create_agent_card_signer(
        signing_key=private_key,
        protected_header={"kid": kid, "alg": "ES256", "typ": "JOSE", "jku": None},
    )
    card = MessageToDict(signer(message))
    card.update(extra or {})
    return card


def signature_verifies(card: dict, public_key) -> bool:
    """Verify as a consumer would: parse with the SDK, check with the SDK verifier."""
    from a2a.client.card_resolver import parse_agent_card
    from a2a.utils.signing import SignatureVerificationError

    verifier = create_signature_verifier(lambda kid, jku: public_key, ["ES256"])
    try:
        verifier(parse_agent_card(copy.deepcopy(card)))
    except SignatureVerificationError:
        return False
    return True


def hybrid_card() -> dict:
    """What an a2a-sdk server publishes for an agent that also speaks 0.3."""
    doc = copy.deepcopy(BASE_CARD)
    doc["supportedInterfaces"] = [
        {
            "url": "https://weather.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        },
        {
            "url": "https://weather.example.com/a2a/v03",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
    ]
    doc["securitySchemes"] = {
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}
    }
    doc["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
    return agent_card_to_dict(ParseDict(doc, AgentCard()))


V03_CARD: dict[str, Any] = {
    "name": "Legacy Translator",
    "description": "Translates text between languages.",
    "url": "https://translator.example.org/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://translator.example.org/a2a", "transport": "JSONRPC"},
        {"url": "https://translator.example.org/rest", "transport": "HTTP+JSON"},
    ],
    "version": "0.9.1",
    "protocolVersion": "0.3.0",
    "capabilities": {"streaming": False, "stateTransitionHistory": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "securitySchemes": {"apikey": {"type": "apiKey", "in": "header", "name": "X-Key"}},
    "security": [{"apikey": []}],
    "skills": [
        {
            "id": "translate",
            "name": "Translate",
            "description": "Any to any.",
            "tags": ["language", "translation"],
        },
    ],
}

SNAKE_CARD: dict[str, Any] = {
    "name": "Snake Agent",
    "description": "A 1.0 card written with proto field names.",
    "supported_interfaces": [
        {
            "url": "https://snake.example.net/a2a",
            "protocol_binding": "HTTP+JSON",
            "protocol_version": "1.0",
            "tenant": "",
        }
    ],
    "version": "1.0.0",
    "documentation_url": "https://snake.example.net/docs",
    "capabilities": {
        "streaming": False,
        "push_notifications": False,
        "extensions": [
            {
                "uri": "https://ext.example/x",
                "required": False,
                "params": {"limit": 5, "nested": {"a": [1, 2.5]}},
            }
        ],
    },
    "default_input_modes": ["application/json"],
    "default_output_modes": ["application/json"],
    "skills": [
        {
            "id": "coil",
            "name": "Coil",
            "description": "Coils.",
            "tags": ["reptile"],
            "examples": [],
            "input_modes": ["application/json"],
        },
    ],
}


def card_on(server, path: str = "/a2a/v1", **overrides) -> dict:
    """A valid 1.0 card whose interface is on a local test server (``server.url(path)``);
    keyword arguments replace top-level members."""
    card = copy.deepcopy(BASE_CARD)
    card["supportedInterfaces"] = [
        {"url": server.url(path), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    card.update(overrides)
    return card
