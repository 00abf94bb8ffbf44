"""Agents for the page tests, registered by card as a user would."""

import copy
from typing import Any

from tests.conftest import BASE_CARD

HOSTILE_NAME = '<script>alert("x")</script><img src=x onerror=alert(1)> Evil & Co'


def card(name: str, skill: str, tags: list[str], *, host: str, **extra: Any) -> dict[str, Any]:
    body = copy.deepcopy(BASE_CARD)
    body["name"] = name
    body["description"] = f"{name}: {skill.lower()} for everyone."
    body["supportedInterfaces"][0]["url"] = f"https://{host}/a2a/v1"
    body["skills"] = [
        {
            "id": skill.lower().replace(" ", "-"),
            "name": skill,
            "description": f"{skill} on request.",
            "tags": tags,
            "examples": [f"Please {skill.lower()} this"],
            "inputModes": ["text/plain"],
            "outputModes": ["application/json"],
        }
    ]
    body.update(extra)
    return body


def register(owner: str, body: dict[str, Any]):
    from protocols.a2a.registration.services import agent_register_card

    return agent_register_card(owner=owner, card=body).agent
