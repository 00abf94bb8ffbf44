"""The relay's task scope with tokens from an identity provider: every token of one
identity scopes the same tasks, another identity's do not, and a token the registry does
not accept (one for the agent itself) scopes by its own value, as any other header."""

import hashlib

import pytest

from protocols.a2a.relay.store import relay_scope

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]
pytestmark = pytest.mark.database_independent


def scope(token: str) -> str:
    return relay_scope({"authorization": f"Bearer {token}"})


def test_tokens_of_one_identity_share_the_relay_scope(oidc_issuer):
    first, later = oidc_issuer.mint(sub="ci"), oidc_issuer.mint(sub="ci", jti="later")
    assert first != later
    assert scope(first) == scope(later)
    assert scope(oidc_issuer.mint(sub="someone-else")) != scope(first)


def test_a_token_for_the_agent_scopes_by_its_own_value(oidc_issuer):
    token = oidc_issuer.mint(sub="ci", aud="https://agent.example")
    expected = hashlib.sha256(f"authorization\nBearer {token}".encode()).hexdigest()
    assert scope(token) == expected
