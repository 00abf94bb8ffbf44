"""Card signatures: signed with a2a-sdk, keys served as a JWK Set by a local HTTPS server."""

import copy
import json
import socket

import pytest
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.algorithms import ECAlgorithm, OKPAlgorithm

from protocols.a2a.cards.signatures import card_signature_verify
from tests.conftest import BASE_CARD

pytest_plugins = ["tests.https_server"]


@pytest.fixture(autouse=True)
def fetch_settings(settings, ca_bundle):
    settings.FETCH_CA_BUNDLE = str(ca_bundle)
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    settings.FETCH_ALLOW_HTTP_HOSTS = []
    return settings


@pytest.fixture(scope="module")
def ec_key():
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture(scope="module")
def ed_key():
    return ed25519.Ed25519PrivateKey.generate()


def sign(card: dict, key, *, alg: str = "ES256", kid: str = "key-1", jku: str | None = None):
    """The card with one more signature, made by the a2a-sdk signer."""
    message = ParseDict(copy.deepcopy(card), AgentCard())
    header = {"alg": alg, "kid": kid, "typ": "JOSE"}
    if jku:
        header["jku"] = jku
    return MessageToDict(
        create_agent_card_signer(signing_key=key, protected_header=header)(message)
    )


def jwk(private_key, kid: str) -> dict:
    if isinstance(private_key, ed25519.Ed25519PrivateKey):
        key = OKPAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
    else:
        key = ECAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
    return {**key, "kid": kid, "use": "sig"}


def publish(server, path: str, *keys: dict) -> str:
    server.route(
        path, 200, {"Content-Type": "application/jwk-set+json"}, json.dumps({"keys": keys}).encode()
    )
    return server.url(path)


def domain_of(server) -> str:
    return f"localhost:{server.port}"


def test_a_card_without_signatures_is_unsigned():
    result = card_signature_verify(copy.deepcopy(BASE_CARD), domain="example.com")
    assert (result.status, result.kid, result.key_source_url) == ("unsigned", None, None)
    assert card_signature_verify({**BASE_CARD, "signatures": []}, domain=None).status == "unsigned"


def test_signature_verifies_with_the_key_at_jku(https_server, ec_key):
    jku = publish(https_server, "/keys/agent.jwks", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec_key, jku=jku)

    result = card_signature_verify(card, domain=None)

    assert result.status == "verified", result.detail
    assert (result.kid, result.key_source_url) == ("key-1", jku)
    assert card_signature_verify(card, domain=domain_of(https_server)).status == "verified"


def test_signature_verifies_with_the_domains_jwks_json(https_server, ec_key, ed_key):
    url = publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "ec-1"), jwk(ed_key, "ed-1"))

    for key, alg, kid in ((ec_key, "ES256", "ec-1"), (ed_key, "EdDSA", "ed-1")):
        card = sign(BASE_CARD, key, alg=alg, kid=kid)
        result = card_signature_verify(card, domain=domain_of(https_server))
        assert result.status == "verified", result.detail
        assert (result.kid, result.key_source_url) == (kid, url)


def test_explicit_default_values_do_not_break_the_signature(https_server, ec_key):
    publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-1"))
    unsigned = copy.deepcopy(BASE_CARD)
    del unsigned["skills"][0]["examples"]
    card = sign(unsigned, ec_key)
    card["supportedInterfaces"][0]["tenant"] = ""
    card["skills"][0]["inputModes"] = []
    card["skills"][0]["examples"] = []
    card["x-registry-note"] = "unknown members are not covered"

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "verified", result.detail


def test_a_tampered_card_is_invalid(https_server, ec_key):
    url = publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec_key)
    card["description"] = "Answers questions about the weather, and sells umbrellas."

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert f"does not match the card with key 'key-1' from {url}" in result.detail
    assert (result.kid, result.key_source_url) == ("key-1", url)


def test_emptying_a_signed_list_is_tampering(https_server, ec_key):
    publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec_key)
    card["skills"][0]["examples"] = []

    assert card_signature_verify(card, domain=domain_of(https_server)).status == "invalid"


def test_a_signature_by_another_key_with_the_same_kid_is_invalid(https_server, ec_key):
    publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec.generate_private_key(ec.SECP256R1()))

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "does not match the card" in result.detail


def test_an_unknown_kid_is_invalid(https_server, ec_key):
    url = publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-2"))
    card = sign(BASE_CARD, ec_key, kid="key-1")

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert f"the key set {url} has no key with kid 'key-1'" in result.detail


def test_a_missing_key_set_is_invalid_with_the_fetch_reason(https_server, ec_key):
    card = sign(BASE_CARD, ec_key)

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "could not be fetched (http-status:" in result.detail
    assert result.key_source_url == https_server.url("/.well-known/jwks.json")


def test_an_unreachable_jku_is_invalid_with_the_fetch_reason(ec_key):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    card = sign(BASE_CARD, ec_key, jku=f"https://localhost:{port}/jwks.json")

    result = card_signature_verify(card, domain=None)

    assert result.status == "invalid"
    assert "could not be fetched (connect-failed:" in result.detail


def test_a_key_set_that_is_not_one_is_invalid(https_server, ec_key):
    https_server.json("/.well-known/jwks.json", b'{"kty": "EC"}')
    card = sign(BASE_CARD, ec_key)

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "is not a JWK Set" in result.detail


def test_hs256_is_refused_before_any_key_is_fetched(https_server):
    secret = b"a shared secret that anyone reading the JWKS would know"
    publish(https_server, "/.well-known/jwks.json", {"kty": "oct", "kid": "key-1", "k": "c2VjcmV0"})
    card = sign(BASE_CARD, secret, alg="HS256")

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "alg 'HS256' is not allowed" in result.detail
    assert https_server.requests == []


def test_a_key_of_the_wrong_type_for_the_alg_is_invalid(https_server, ec_key, ed_key):
    publish(https_server, "/.well-known/jwks.json", jwk(ed_key, "key-1"))
    card = sign(BASE_CARD, ec_key, kid="key-1")

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "is a 'OKP' key; ES256 needs EC" in result.detail


def test_one_valid_signature_among_several_suffices(https_server, ec_key, ed_key):
    url = publish(https_server, "/.well-known/jwks.json", jwk(ed_key, "ed-1"))
    card = sign(BASE_CARD, ec_key, kid="retired")
    card = sign(card, ed_key, alg="EdDSA", kid="ed-1")
    assert len(card["signatures"]) == 2

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "verified", result.detail
    assert (result.kid, result.key_source_url) == ("ed-1", url)
    assert "signatures[1]" in result.detail
    assert len([r for r in https_server.requests if r.path == "/.well-known/jwks.json"]) == 1


def test_every_failure_is_named_when_no_signature_verifies(https_server, ec_key):
    publish(https_server, "/.well-known/jwks.json", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec_key, kid="old")
    card["signatures"].append({"protected": "!!not base64!!", "signature": "AAAA"})

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "signatures[0]: the key set" in result.detail
    assert "has no key with kid 'old'" in result.detail
    assert "signatures[1]: the protected header is not base64url-encoded JSON" in result.detail
    assert result.kid == "old"


def test_a_jku_off_the_domain_is_refused_without_fetching(https_server, ec_key):
    jku = publish(https_server, "/keys.jwks", jwk(ec_key, "key-1"))
    card = sign(BASE_CARD, ec_key, jku=jku)

    result = card_signature_verify(card, domain="weather.example.com")

    assert result.status == "invalid"
    assert f"jku {jku} is not on weather.example.com" in result.detail
    assert https_server.requests == []


def test_a_jku_on_another_port_of_the_domain_is_refused(https_server, ec_key):
    card = sign(BASE_CARD, ec_key, jku=f"https://localhost:{https_server.port}/jwks.json")

    result = card_signature_verify(card, domain="localhost")

    assert result.status == "invalid"
    assert "is not on localhost, the domain" in result.detail


def test_a_plain_http_jku_is_refused(ec_key):
    card = sign(BASE_CARD, ec_key, jku="http://keys.example.com/jwks.json")

    result = card_signature_verify(card, domain=None)

    assert result.status == "invalid"
    assert "jku 'http://keys.example.com/jwks.json' must be an https URL" in result.detail


def test_without_jku_or_domain_there_is_nowhere_to_find_the_key(ec_key):
    result = card_signature_verify(sign(BASE_CARD, ec_key), domain=None)
    assert result.status == "invalid"
    assert "no jku in the protected header and no domain" in result.detail


def test_a_jku_to_a_private_address_is_blocked_by_the_fetcher(fetch_settings, ec_key):
    fetch_settings.FETCH_ALLOWED_HOSTS = []
    card = sign(BASE_CARD, ec_key, jku="https://127.0.0.1/jwks.json")

    result = card_signature_verify(card, domain=None)

    assert result.status == "invalid"
    assert "could not be fetched (blocked-address:" in result.detail


def test_malformed_signatures_are_invalid_not_errors():
    assert card_signature_verify({**BASE_CARD, "signatures": "x"}, domain=None).status == "invalid"
    result = card_signature_verify({**BASE_CARD, "signatures": [{"protected": 5}]}, domain=None)
    assert result.status == "invalid"
    assert "a2a-sdk cannot parse the card" in result.detail


def test_no_more_than_two_key_sets_are_fetched_for_one_card(https_server, ec_key):
    other = ec.generate_private_key(ec.SECP256R1())
    card = copy.deepcopy(BASE_CARD)
    # Three signatures by a key the sets do not hold, each naming its own key set, then one
    # that would verify: a card may not make the registry fetch a set per signature.
    for n in range(3):
        card = sign(
            card,
            other,
            kid="stranger",
            jku=publish(https_server, f"/k{n}.jwks", jwk(ec_key, "key-1")),
        )
    card = sign(card, ec_key, jku=publish(https_server, "/k3.jwks", jwk(ec_key, "key-1")))

    result = card_signature_verify(card, domain=domain_of(https_server))

    assert result.status == "invalid"
    assert "more than 2 key sets" in result.detail
    assert sorted(r.path for r in https_server.requests) == ["/k0.jwks", "/k1.jwks"]
