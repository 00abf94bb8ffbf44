"""Reading the AAP declaration of an agent card (either spelling of its members): the
extension, its version, its parameters and the card's skill ids."""

import re
from dataclasses import dataclass
from typing import Any

from protocols.a2a.cards.formats import card_naming

AAP_V01_EXTENSION_URI = "https://autoagentprotocol.org/extensions/a2a-automotive-retail/v0.1"


AAP_SKILL_IDS = (
    "dealer.information",
    "inventory.facets",
    "inventory.search",
    "inventory.vehicle",
    "lead.submit",
)


AAP_BINDINGS = ("JSONRPC", "HTTP+JSON")


LEGACY_CONTRACT_VERSION = "0.1.0"


LEGACY_SKILL_IDS = ("lead.general", "lead.vehicle", "lead.appointment")


# Any AAP extension URI; group 1 is its version ("0.1", "1.1", ...).
_AAP_URI = re.compile(
    r"^https?://(?:www\.)?autoagentprotocol\.org/extensions/[^/]+/v(\d+(?:\.\d+)*)/?$",
    re.IGNORECASE,
)


# camelCase member names the card schema knows, renamed to their snake_case spelling.
_CARD_MEMBERS = (
    "supported_interfaces",
    "protocol_binding",
    "protocol_version",
    "documentation_url",
    "icon_url",
    "default_input_modes",
    "default_output_modes",
    "security_schemes",
    "security_requirements",
    "push_notifications",
    "extended_agent_card",
    "input_modes",
    "output_modes",
)


# Members whose keys are chosen by the publisher (scheme names, extension params).
OPAQUE_MEMBERS = {"params", "security_schemes", "security_requirements"}


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


SNAKE_OF = {_camel(name): name for name in _CARD_MEMBERS}


class Card:
    """A decoded card read under snake_case or camelCase member names."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.snake = card_naming(doc) == "snake_case"

    def key(self, obj: Any, name: str) -> str:
        """The member's key as written in ``obj``, else as this card would spell it."""
        camel = _camel(name)
        if isinstance(obj, dict):
            if name in obj:
                return name
            if camel in obj:
                return camel
        return name if self.snake else camel

    def get(self, obj: Any, name: str) -> tuple[str, Any]:
        key = self.key(obj, name)
        return key, obj.get(key) if isinstance(obj, dict) else None


@dataclass(frozen=True)
class Declaration:
    """What the card's extension list says about AAP."""

    kind: str  # "v0.1", "near" (near-miss v0.1 URI), "other" (another AAP version), "none"
    version: str | None = None
    index: int | None = None
    uri: str | None = None


def declaration_of(card: Card) -> Declaration:
    _, capabilities = card.get(card.doc, "capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    if not isinstance(extensions, list):
        return Declaration("none")
    uris = [
        (index, entry["uri"])
        for index, entry in enumerate(extensions)
        if isinstance(entry, dict) and isinstance(entry.get("uri"), str)
    ]
    for index, uri in uris:
        if uri == AAP_V01_EXTENSION_URI:
            return Declaration("v0.1", "0.1", index, uri)
    for index, uri in uris:
        match = _AAP_URI.match(uri.strip())
        if match:
            kind = "near" if match.group(1) == "0.1" else "other"
            return Declaration(kind, match.group(1), index, uri)
    return Declaration("none")


def skill_ids(card: Card) -> list[str]:
    """AAP skill ids the card's ``skills[]`` declares, in card order, once each."""
    skills = card.doc.get("skills")
    if not isinstance(skills, list):
        return []
    ids = [s.get("id") for s in skills if isinstance(s, dict)]
    return list(dict.fromkeys(i for i in ids if i in AAP_SKILL_IDS))


def aap_card_summary(card: Any) -> dict[str, Any]:
    """Dealer-agent status of a card without validating it: for storing beside the card."""
    if not isinstance(card, dict):
        return {"isDealerAgent": False, "aapVersion": None, "implementedSkills": []}
    view = Card(card)
    declaration = declaration_of(view)
    dealer = declaration.kind != "none"
    return {
        "isDealerAgent": dealer,
        "aapVersion": declaration.version,
        "implementedSkills": skill_ids(view) if dealer else [],
    }


def aap_manifest_url(card: Any) -> str | None:
    """The ``manifest_url`` param of the card's AAP extension, if it gives one."""
    if not isinstance(card, dict):
        return None
    view = Card(card)
    declaration = declaration_of(view)
    if declaration.index is None:
        return None
    _, capabilities = view.get(card, "capabilities")
    params = capabilities["extensions"][declaration.index].get("params")
    url = params.get("manifest_url") if isinstance(params, dict) else None
    return url.strip() if isinstance(url, str) and url.strip() else None
