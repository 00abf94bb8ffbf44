"""Verification levels (EDP §4), computed from the evidence the registry holds.

- 0: a provider's registration claims the entity, and no card of its domain lists that
  provider (or the domain's card is flagged: missing or invalid when last crawled);
- 1: the domain's own card lists the MCP server (publishing under ``/.well-known`` proves
  control of the domain);
- 2: both agree: the provider's registration names the domain (and the entry's
  ``entity_id``, when both give one) and the domain's card lists that provider, or the
  entry carries the provider's valid ES256 signature (its registered key vouches for it).
 An invalid signature never raises a level; it is reported in the entry's ``verification``.
An entity's level is the best of its entries'.
"""

from collections.abc import Iterable

from protocols.entities.cards.signatures import entry_jwt_verify
from protocols.entities.cards.validation import McpEntry

CARD_REASON = "listed by the domain's entity card"
MUTUAL_REASON = "listed by the domain's card and claimed by the provider's registration"
SIGNED_REASON = "listed by the domain's card and signed by the provider's registered key"
CLAIM_REASON = "claimed by the provider's registration only"
FLAGGED_REASON = "the domain's card was missing or invalid when last crawled"


def entry_document(entry: McpEntry) -> dict:
    """An MCP entry as stored (Entity.mcps): what the card says, verification to come."""
    return {
        "provider": entry.provider or None,
        "endpoint": entry.endpoint,
        "entity_id": entry.entity_id or None,
        "capabilities": entry.capabilities,
        "priority": entry.priority,
        "order": entry.order,
        "auth_required": entry.auth_required,
        "signature": (entry.verification or {}).get("signature"),
        "verification": None,
    }


def _claimed(entry: dict, claims: Iterable) -> bool:
    for claim in claims:
        if claim.provider_id_text != entry["provider"]:
            continue
        if entry["entity_id"] and claim.entity_id != entry["entity_id"]:
            continue
        return True
    return False


def entry_verify(
    entry: dict, *, domain: str, claims: list, keys: dict[str, str], flagged: bool
) -> dict:
    """The entry's ``verification``: level, method, valid, expires_at, reason.

    ``claims``: the provider claims naming ``domain`` (each with ``provider_id_text`` and
    ``entity_id``); ``keys``: provider id -> registered PEM public key."""
    level, reason = 1, CARD_REASON
    if entry["provider"] and _claimed(entry, claims):
        level, reason = 2, MUTUAL_REASON
    method = valid = expires_at = None
    if entry.get("signature"):
        method = "signed_jwt"
        result = entry_jwt_verify(
            entry["signature"],
            public_key=keys.get(entry["provider"] or ""),
            provider=entry["provider"] or "",
            domain=domain,
            entity_id=entry["entity_id"] or "",
            capabilities=entry["capabilities"],
        )
        valid = result.valid
        expires_at = result.expires_at.isoformat() if result.expires_at else None
        if result.valid:
            level, reason = 2, SIGNED_REASON
        else:
            reason = f"{reason}; the signature is not valid: {result.reason}"
    if flagged:
        level, reason = 0, FLAGGED_REASON
    return {
        "level": level,
        "method": method,
        "valid": valid,
        "expires_at": expires_at,
        "reason": reason,
    }


def claim_verification() -> dict:
    return {
        "level": 0,
        "method": None,
        "valid": None,
        "expires_at": None,
        "reason": CLAIM_REASON,
    }


def entity_level(mcps: list[dict]) -> int:
    return max((m["verification"]["level"] for m in mcps), default=0)
