"""The MCP face with tokens from an identity provider: register_agent as the token's
mapped owner; a token of another audience refused with its reason in the tool error."""

import pytest

from registry.agents.models import Agent
from tests.protocols.mcp.test_tools import call

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]


@pytest.fixture
def registry_url(live_server, settings) -> str:
    settings.REGISTRY_BASE_URL = live_server.url
    return live_server.url


@pytest.mark.django_db(transaction=True)
def test_register_agent_with_a_token_registers_as_its_owner(oidc_issuer, make_card, registry_url):
    card = make_card(name="Via MCP")
    result = call(registry_url, "register_agent", {"card": card}, key=oidc_issuer.mint(sub="ci"))
    assert result.is_error is False, result.content
    agent = Agent.objects.get(pk=result.structured_content["agentId"])
    assert (agent.owner, agent.name) == ("idp:ci", "Via MCP")


@pytest.mark.django_db(transaction=True)
def test_register_agent_with_a_token_of_another_audience_stores_nothing(
    oidc_issuer, make_card, registry_url
):
    token = oidc_issuer.mint(aud="https://elsewhere.example")
    result = call(registry_url, "register_agent", {"card": make_card()}, key=token)
    assert result.is_error is True
    assert result.structured_content["problem"]["detail"] == "The token is for another audience."
    assert result.structured_content["problem"]["status"] == 401
    assert not Agent.objects.exists()
