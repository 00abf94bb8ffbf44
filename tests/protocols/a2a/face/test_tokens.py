"""The registry as an A2A agent with tokens from an identity provider: a registration as
the token's mapped owner, its tasks found again with another token of the same identity,
and a refused token's reason in the task."""

import pytest
from a2a.helpers.proto_helpers import new_data_part
from a2a.types.a2a_pb2 import TaskState

from registry.agents.models import Agent
from tests.protocols.a2a.face.conftest import answer, converse

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]


@pytest.mark.django_db(transaction=True)
def test_a_token_registers_as_its_owner_and_its_identity_keeps_its_tasks(
    oidc_issuer, make_card, registry_url
):
    parts = [new_data_part({"card": make_card(name="Token Agent")})]
    task, _, listed = converse(registry_url, "JSONRPC", parts, key=oidc_issuer.mint(sub="ci"))

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    agent = Agent.objects.get(pk=answer(task)[0]["agentId"])
    assert (agent.owner, agent.name) == ("idp:ci", "Token Agent")
    assert [t.id for t in listed.tasks] == [task.id]
    # a later token of the same identity lists the task; another identity does not
    again = [new_data_part({"card": make_card(name="Token Agent 2")})]
    _, _, later = converse(registry_url, "JSONRPC", again, key=oidc_issuer.mint(sub="ci", jti="2"))
    assert task.id in [t.id for t in later.tasks]
    _, _, other = converse(registry_url, "JSONRPC", again, key=oidc_issuer.mint(sub="other"))
    assert task.id not in [t.id for t in other.tasks]


@pytest.mark.django_db(transaction=True)
def test_an_expired_token_stores_nothing_and_says_why(oidc_issuer, make_card, registry_url):
    parts = [new_data_part({"card": make_card()})]
    token = oidc_issuer.mint(exp=1_000_000, iat=999_000)
    task, _, _ = converse(registry_url, "JSONRPC", parts, key=token)

    assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    data, text = answer(task)
    assert text == "The token expired."
    assert data["problem"]["status"] == 401
    assert not Agent.objects.exists()
