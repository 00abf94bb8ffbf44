"""What format an A2A card is in (1.0, 0.3 or a hybrid of both; camelCase or snake_case),
reading its members under either spelling, the URL rule for cards, and the report of a
card's validation (protocols/a2a/cards/validation.py)."""

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from registry.http.jsonutil import Problem
from registry.outbound.hosts import https_url_problem

V1 = "1.0"
V1_RC = "1.0-rc"
V03 = "0.3"
HYBRID = "hybrid"
# The A2A 1.0 release candidate's interface binding member (1.0: protocolBinding).
RC_BINDING = "transport"

# Top-level members of a 0.3 card; in a 1.0 card they make it a hybrid.
LEGACY_MEMBERS = (
    "url",
    "protocolVersion",
    "preferredTransport",
    "additionalInterfaces",
    "supportsAuthenticatedExtendedCard",
    "security",
)
_SNAKE_HINTS = {
    "supported_interfaces",
    "default_input_modes",
    "default_output_modes",
    "security_schemes",
    "security_requirements",
    "documentation_url",
    "icon_url",
    "protocol_version",
    "preferred_transport",
    "additional_interfaces",
}


# A media type (RFC 6838 type/subtype, parameters allowed): input and output modes.
MEDIA_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$")


@dataclass
class CardReport:
    spec_version: str | None  # "1.0", "1.0-rc", "0.3", "hybrid"; None: not a card
    naming: str  # "camelCase" or "snake_case"
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def signed(self) -> bool:
        return bool(self.signatures)

    signatures: list[Any] = field(default_factory=list)
    # The card as a2a-sdk reads it (1.0 camelCase), when valid: for mapping and indexing.
    index_view: dict | None = None


def card_get(doc: dict, camel: str, default: Any = None) -> Any:
    """A member read under its camelCase name or its snake_case proto name."""
    if camel in doc:
        return doc[camel]
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()
    return doc.get(snake, default)


def _rc_interfaces(doc: dict) -> bool:
    """An interface names its binding ``transport`` and not ``protocolBinding``: the A2A
    1.0 release candidate's cards (the registry design note's example card)."""
    interfaces = card_get(doc, "supportedInterfaces")
    return isinstance(interfaces, list) and any(
        isinstance(i, dict) and RC_BINDING in i and card_get(i, "protocolBinding") is None
        for i in interfaces
    )


def card_classify(doc: dict) -> str | None:
    """1.0, 1.0-rc (the release candidate's names), hybrid (1.0 with 0.3 mirrors, as
    a2a-sdk servers publish) or 0.3."""
    if "supportedInterfaces" in doc or "supported_interfaces" in doc:
        if any(member in doc for member in LEGACY_MEMBERS):
            return HYBRID
        return V1_RC if _rc_interfaces(doc) else V1
    if any(m in doc for m in ("url", "protocolVersion", "protocol_version", "preferred_transport")):
        return V03
    return None


def card_naming(doc: dict) -> str:
    return "snake_case" if _SNAKE_HINTS.intersection(doc) else "camelCase"


def url_problem(value: str) -> str | None:
    """Why a card URL is unacceptable (registry.outbound.hosts' https rule), or None."""
    return https_url_problem(value, allow_http=settings.A2A_ALLOW_HTTP_URLS)


def rc_view(doc: dict) -> tuple[dict, list[Problem]]:
    """A 1.0 RC card in the final 1.0's names (a copy), and a warning for each RC member:
    ``transport`` read as ``protocolBinding``, an absent ``protocolVersion`` as 1.0, an
    absent ``description`` (REQUIRED in 1.0) allowed."""
    view = copy.deepcopy(doc)
    warnings: list[Problem] = []
    interfaces = card_get(view, "supportedInterfaces")
    for index, iface in enumerate(interfaces if isinstance(interfaces, list) else []):
        if not isinstance(iface, dict) or RC_BINDING not in iface:
            continue
        path = f"supportedInterfaces[{index}]"
        if card_get(iface, "protocolBinding") is None:
            iface["protocolBinding"] = iface.pop(RC_BINDING)
            warnings.append(
                Problem(f"{path}.transport", "A2A 1.0 RC member: read as protocolBinding")
            )
        if card_get(iface, "protocolVersion") is None:
            iface["protocolVersion"] = V1
            warnings.append(
                Problem(f"{path}.protocolVersion", "absent (A2A 1.0 RC card): read as 1.0")
            )
    if card_get(view, "description") is None:
        warnings.append(Problem("description", "absent (A2A 1.0 RC card); REQUIRED in A2A 1.0"))
    return view, warnings
