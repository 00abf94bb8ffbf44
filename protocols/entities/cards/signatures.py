"""Signed JWTs of EDP MCP entries (EDP §4.5): a provider vouches for an entity's entry.

Only ES256 (ECDSA over P-256) is accepted; the key is the provider's registered
``public_key``. The claims must say what the entry says: ``iss`` its provider, ``sub`` the
entity's domain, ``entity_id`` and ``capabilities`` its own, ``exp`` in the future (with
``JWT_LEEWAY_SECONDS`` of clock skew). The card's ``issued_at``/``expires_at`` are
informative only: the token's ``exp`` decides.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

# PyJWT and cryptography are imported where a key or token is checked: some 9 MiB that a
# web worker serving reads never needs.

JWT_LEEWAY_SECONDS = 60
ALGORITHM = "ES256"


@dataclass(frozen=True)
class JwtResult:
    valid: bool
    reason: str
    expires_at: datetime | None = None


def public_key_problem(pem: str) -> str | None:
    """Why a PEM text is not a usable EC P-256 public key, or None."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(pem.encode())
    except (ValueError, TypeError):
        return "is not a PEM public key"
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        return "must be an EC P-256 key (signed JWTs use ES256)"
    return None


def _expiry(token: str) -> datetime | None:
    import jwt

    try:
        exp = jwt.decode(token, options={"verify_signature": False}).get("exp")
    except jwt.PyJWTError:
        return None
    if isinstance(exp, int | float) and not isinstance(exp, bool):
        try:
            return datetime.fromtimestamp(exp, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def entry_jwt_verify(
    token: str,
    *,
    public_key: str | None,
    provider: str,
    domain: str,
    entity_id: str,
    capabilities: list[str],
) -> JwtResult:
    """Whether ``token`` is the provider's valid signature over this MCP entry."""
    import jwt
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    expires_at = _expiry(token)
    if not public_key:
        return JwtResult(False, f"provider {provider!r} has registered no public key", expires_at)
    if public_key_problem(public_key):
        return JwtResult(False, f"provider {provider!r} has no usable P-256 key", expires_at)
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return JwtResult(False, "is not a compact JWT", expires_at)
    if header.get("alg") != ALGORITHM:
        return JwtResult(False, f"alg is {header.get('alg')!r}; only ES256 is accepted", expires_at)
    try:
        claims = jwt.decode(
            token,
            load_pem_public_key(public_key.encode()),
            algorithms=[ALGORITHM],
            issuer=provider,
            options={"require": ["exp", "iss", "sub"]},
            leeway=JWT_LEEWAY_SECONDS,
        )
    except jwt.ExpiredSignatureError:
        return JwtResult(False, "expired", expires_at)
    except jwt.InvalidIssuerError:
        return JwtResult(False, f"iss is not the entry's provider {provider!r}", expires_at)
    except jwt.InvalidSignatureError:
        return JwtResult(False, "the signature does not verify with the provider's key", expires_at)
    except jwt.MissingRequiredClaimError as exc:
        return JwtResult(False, f"the {exc.claim} claim is missing", expires_at)
    except jwt.PyJWTError as exc:
        return JwtResult(False, f"invalid token: {exc}"[:200], expires_at)
    if claims.get("sub") != domain:
        return JwtResult(False, f"sub is not the entity's domain {domain!r}", expires_at)
    if entity_id and claims.get("entity_id") != entity_id:
        return JwtResult(False, "entity_id differs from the entry's", expires_at)
    claimed = claims.get("capabilities")
    if not isinstance(claimed, list) or sorted(map(str, claimed)) != sorted(capabilities):
        return JwtResult(False, "capabilities differ from the entry's", expires_at)
    return JwtResult(True, "verified", expires_at)
