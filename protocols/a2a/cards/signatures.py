"""Verify the JWS signatures of an A2A agent card (A2A §8.4).

The payload is the card as a2a-sdk canonicalizes it (parse, MessageToDict,
drop ``signatures`` and empty values, RFC 8785 JCS), so a card that spells out
defaults such as ``"tenant": ""`` verifies like the SDK signed it. The check
itself is a2a-sdk's ``create_signature_verifier``, run on one signature at a
time so that each failure can be named.

Keys come from the JWK Set at the protected header's ``jku``, or else at
``https://<domain>/.well-known/jwks.json``, always through ``registry.outbound.fetch``.
``jku`` is attacker-chosen input, so (spec: allow-list it) it must be https and,
when a domain is given, on exactly the domain's origin (host and port; no
subdomains, which may belong to other tenants). Only asymmetric algorithms are
accepted: with HS256 anyone holding the published "key" could sign.
"""

import binascii
import copy
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard, AgentCardSignature
from google.protobuf.json_format import ParseError

from registry.outbound.fetch import FetchError, fetch_json
from registry.outbound.hosts import Domain, InvalidHost, domain_parse, https_url_problem

if TYPE_CHECKING:
    from jwt import PyJWK

# PyJWT (a2a-sdk's signing uses it) and cryptography's bindings are imported where a
# signature is checked: some 9 MiB that a web worker serving reads never needs.

VERIFIED = "verified"
INVALID = "invalid"
UNSIGNED = "unsigned"

JWKS_PATH = "/.well-known/jwks.json"
# Distinct key sets fetched for one verification: each signature's jku may name another,
# and each is a fetch (docs/operations/security.md).
KEY_SETS_MAX = 2
ALLOWED_ALGORITHMS = (
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "EdDSA",
)
_KEY_TYPES = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}
_CURVES = {
    "ES256": ("P-256",),
    "ES384": ("P-384",),
    "ES512": ("P-521",),
    "EdDSA": ("Ed25519", "Ed448"),
}


@dataclass(frozen=True)
class SignatureResult:
    status: str  # "verified", "invalid" or "unsigned"
    detail: str
    kid: str | None = None
    key_source_url: str | None = None


class _Rejected(Exception):
    """One signature that does not verify, and why."""

    def __init__(self, detail: str, kid: str | None = None, key_source_url: str | None = None):
        super().__init__(detail)
        self.detail = detail
        self.kid = kid
        self.key_source_url = key_source_url


def card_signature_verify(card: dict, *, domain: str | None) -> SignatureResult:
    """Whether one of the card's signatures verifies; never raises for a bad card or key."""
    signatures = card.get("signatures")
    if signatures is None or signatures == []:
        return SignatureResult(UNSIGNED, "The card carries no signatures.")
    if not isinstance(signatures, list):
        return SignatureResult(INVALID, "signatures must be a list of JWS objects.")
    try:
        message = parse_agent_card(copy.deepcopy(card))
    except (ParseError, ValueError, TypeError, AttributeError) as exc:
        return SignatureResult(INVALID, f"a2a-sdk cannot parse the card: {exc}")
    try:
        origin = domain_parse(domain) if domain is not None else None
    except InvalidHost as exc:
        return SignatureResult(INVALID, f"domain {exc}.")

    key_sets: dict[str, list[Any] | _Rejected] = {}
    failures: list[_Rejected] = []
    for index, signature in enumerate(message.signatures):
        try:
            kid, key_url = _signature_verify(message, signature, origin, key_sets)
        except _Rejected as exc:
            exc.detail = f"signatures[{index}]: {exc.detail}"
            failures.append(exc)
            continue
        return SignatureResult(
            VERIFIED,
            f"signatures[{index}] verifies with key {kid!r} from {key_url}.",
            kid,
            key_url,
        )
    first = failures[0]
    return SignatureResult(
        INVALID,
        "No signature verifies. " + " ".join(f"{f.detail}." for f in failures),
        first.kid,
        first.key_source_url,
    )


def _signature_verify(
    message: AgentCard,
    signature: AgentCardSignature,
    origin: Domain | None,
    key_sets: dict[str, list[Any] | _Rejected],
) -> tuple[str, str]:
    header = _protected_header(signature.protected)
    kid, alg = header.get("kid"), header.get("alg")
    if alg not in ALLOWED_ALGORITHMS:
        raise _Rejected(
            f"alg {alg!r} is not allowed (only {', '.join(ALLOWED_ALGORITHMS)})",
            kid if isinstance(kid, str) else None,
        )
    if not isinstance(kid, str) or not kid:
        raise _Rejected("the protected header has no kid")
    key_url = _key_set_url(header.get("jku"), origin, kid)
    candidates = [jwk for jwk in _key_set(key_url, key_sets, kid) if jwk.get("kid") == kid]
    if not candidates:
        raise _Rejected(f"the key set {key_url} has no key with kid {kid!r}", kid, key_url)

    from a2a.utils.signing import SignatureVerificationError, create_signature_verifier

    single = AgentCard()
    single.CopyFrom(message)
    del single.signatures[:]
    single.signatures.append(signature)
    for jwk in candidates:
        key = _verification_key(jwk, alg, kid, key_url)
        verifier = create_signature_verifier(lambda _kid, _jku, key=key: key, [alg])
        try:
            verifier(single)
        except SignatureVerificationError:
            continue
        return kid, key_url
    raise _Rejected(
        f"the signature does not match the card with key {kid!r} from {key_url}", kid, key_url
    )


def _protected_header(protected: str) -> dict[str, Any]:
    from jwt.utils import base64url_decode

    try:
        header = json.loads(base64url_decode(protected.encode("ascii")).decode("utf-8"))
    except (binascii.Error, UnicodeError, ValueError):
        raise _Rejected("the protected header is not base64url-encoded JSON") from None
    if not isinstance(header, dict):
        raise _Rejected("the protected header is not a JSON object")
    return header


def _key_set_url(jku: Any, origin: Domain | None, kid: str) -> str:
    if jku is None:
        if origin is None:
            raise _Rejected("no jku in the protected header and no domain to find keys at", kid)
        return origin.url(JWKS_PATH)
    if not isinstance(jku, str):
        raise _Rejected("jku is not a string", kid)
    problem = https_url_problem(jku)
    if problem:
        raise _Rejected(f"jku {jku!r} {problem}", kid, jku)
    parts = urlsplit(jku)
    port = parts.port
    if origin is not None:
        try:
            same = (domain_parse(parts.hostname).host, port or 443) == (
                origin.host,
                origin.port or 443,
            )
        except InvalidHost:
            same = False
        if not same:
            raise _Rejected(
                f"jku {jku} is not on {origin.authority}, the domain the card is checked for",
                kid,
                jku,
            )
    return jku


def _key_set(url: str, key_sets: dict[str, list[Any] | _Rejected], kid: str) -> list[dict]:
    """The JWKs at ``url``, fetched once per verification, from KEY_SETS_MAX sets at most."""
    if url not in key_sets and len(key_sets) >= KEY_SETS_MAX:
        raise _Rejected(
            f"the card names more than {KEY_SETS_MAX} key sets; {url} was not fetched", kid, url
        )
    if url not in key_sets:
        try:
            _, document = fetch_json(url)
        except FetchError as exc:
            key_sets[url] = _Rejected(
                f"the key set could not be fetched ({exc.reason}: {exc.detail})", kid, url
            )
        else:
            keys = document.get("keys") if isinstance(document, dict) else None
            if isinstance(keys, list):
                key_sets[url] = [jwk for jwk in keys if isinstance(jwk, dict)]
            else:
                key_sets[url] = _Rejected(f"{url} is not a JWK Set (no keys list)", kid, url)
    known = key_sets[url]
    if isinstance(known, _Rejected):
        raise _Rejected(known.detail, kid, url)
    return known


def _verification_key(jwk: dict, alg: str, kid: str, key_url: str) -> "PyJWK":
    """The JWK as a key for ``alg``, refusing keys of another type, curve or use."""
    from jwt import PyJWK
    from jwt.exceptions import PyJWTError

    def reject(why: str) -> _Rejected:
        return _Rejected(f"key {kid!r} from {key_url} {why}", kid, key_url)

    key_type = _KEY_TYPES[alg[:2]]
    if jwk.get("kty") != key_type:
        raise reject(f"is a {jwk.get('kty')!r} key; {alg} needs {key_type}")
    if alg in _CURVES and jwk.get("crv") not in _CURVES[alg]:
        raise reject(f"is on curve {jwk.get('crv')!r}; {alg} needs {' or '.join(_CURVES[alg])}")
    if jwk.get("alg", alg) != alg:
        raise reject(f"is for {jwk['alg']}, but the signature says {alg}")
    if jwk.get("use", "sig") != "sig":
        raise reject(f"is for use {jwk['use']!r}, not signatures")
    try:
        return PyJWK(jwk, algorithm=alg)
    except (PyJWTError, ValueError, TypeError, KeyError) as exc:
        raise reject(f"cannot be used: {exc}") from None
