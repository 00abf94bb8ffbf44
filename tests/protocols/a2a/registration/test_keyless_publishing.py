"""Keyless publishing from CI, as docs/guides/identity-providers.md's GitHub Actions
workflow does: a token shaped like GitHub's (claims ``repository``, ``repository_owner``,
``ref``, ``sub``; audience the registry's URL) registers the repository owner's agent by
``POST /a2a/agents`` with no stored secret, and the next run updates it."""

import pytest
from rest_framework.test import APIClient

from registry.access.models import AuditEntry
from registry.agents.models import Agent

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]
pytestmark = pytest.mark.django_db

REGISTRY = "https://registry.example.com"


def workflow_token(issuer, repository: str = "octo-org/weather-agent", ref="refs/heads/main"):
    owner = repository.split("/")[0]
    return issuer.mint(
        aud=REGISTRY,
        sub=f"repo:{repository}:ref:{ref}",
        repository=repository,
        repository_owner=owner,
        repository_owner_id="4242",
        ref=ref,
        workflow="Publish agent card",
        event_name="push",
    )


def publish(token: str, card: dict):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.post("/a2a/agents", {"card": card}, format="json")


@pytest.fixture
def github(oidc_issuer, settings):
    settings.REGISTRY_BASE_URL = REGISTRY
    oidc_issuer.configure(
        settings,
        audience=REGISTRY,
        owner="github:{repository_owner}",
        claims={"repository_owner": ("octo-org",)},
    )
    return oidc_issuer


def test_a_workflow_token_publishes_and_then_updates_the_owners_agent(github, make_card):
    first = publish(workflow_token(github), make_card())
    assert first.status_code == 201, first.content
    assert first.json()["owner"] == "github:octo-org"

    again = publish(workflow_token(github), make_card(description="Better forecasts."))
    assert again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]
    assert Agent.objects.get().description == "Better forecasts."
    (sign_in, *_) = AuditEntry.objects.filter(action="token.sign-in")
    assert sign_in.after["subject"] == "repo:octo-org/weather-agent:ref:refs/heads/main"


def test_a_workflow_of_an_owner_not_accepted_publishes_nothing(github, make_card):
    response = publish(workflow_token(github, "mallory/agent"), make_card())
    assert response.status_code == 401
    assert response.json()["detail"] == (
        "The token's claim 'repository_owner' is not one this registry accepts."
    )
    assert not Agent.objects.exists()


def test_a_workflow_token_asked_for_another_audience_publishes_nothing(github, make_card):
    token = github.mint(aud="https://other-registry.example", repository_owner="octo-org")
    assert publish(token, make_card()).status_code == 401
    assert not Agent.objects.exists()
