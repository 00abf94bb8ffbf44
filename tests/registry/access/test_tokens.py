"""Tokens from identity providers (OIDC_ISSUERS): each token case of a local issuer with its
answer, a valid token acting as a key of its mapped owner and scope, and its sign-in in the
audit log."""

import pytest
from rest_framework.test import APIClient

from registry.access.models import AuditEntry
from registry.agents.models import Agent

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]
pytestmark = pytest.mark.django_db


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def refused(response, detail: str) -> None:
    assert response.status_code == 401, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "/problems/not-authenticated"
    assert body["detail"] == detail


def test_a_valid_token_writes_as_its_mapped_owner(oidc_issuer, native_payload):
    response = bearer(oidc_issuer.mint(sub="carol")).post(
        "/agents", native_payload(), format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["owner"] == "idp:carol"
    agent = response.json()
    # the owner's other token changes it; another subject's may not
    patched = bearer(oidc_issuer.mint(sub="carol")).patch(
        f"/agents/{agent['id']}", {"name": "Renamed"}, format="json"
    )
    assert patched.status_code == 200
    other = bearer(oidc_issuer.mint(sub="dave")).patch(
        f"/agents/{agent['id']}", {"name": "Mine"}, format="json"
    )
    assert other.status_code == 403
    assert Agent.objects.get(pk=agent["id"]).name == "Renamed"


def test_api_keys_keep_working_beside_tokens(oidc_issuer, alice, native_payload):
    assert alice.post("/agents", native_payload(), format="json").json()["owner"] == "alice"


@pytest.mark.parametrize(
    ("claims", "detail"),
    [
        ({"exp": 1_000_000, "iat": 999_000}, "The token expired."),
        ({"aud": "https://other.example"}, "The token is for another audience."),
        ({"iss": "https://issuer.example"}, "The token's issuer is not accepted here."),
        ({"nbf": 4_000_000_000}, "The token is not valid yet."),
        ({"sub": None}, "The token has no claim 'sub'."),
        ({"exp": None}, "The token has no claim 'exp'."),
        ({"exp": 4_000_000_000}, "The token lives longer than this registry accepts."),
    ],
    ids=["expired", "audience", "issuer", "not-yet", "no-subject", "no-expiry", "long-lived"],
)
def test_a_token_refused_says_why(oidc_issuer, native_payload, claims, detail):
    response = bearer(oidc_issuer.mint(**claims)).post("/agents", native_payload(), format="json")
    refused(response, detail)
    assert not Agent.objects.exists()


def test_the_leeway_forgives_a_little_clock_skew(oidc_issuer, settings, native_payload):
    import time

    settings.OIDC_LEEWAY_SECONDS = 30
    token = oidc_issuer.mint(exp=int(time.time()) - 10)
    assert bearer(token).post("/agents", native_payload(), format="json").status_code == 201


def test_alg_none_is_refused_without_saying_more(oidc_issuer, native_payload):
    response = bearer(oidc_issuer.mint_unsigned()).post("/agents", native_payload(), format="json")
    refused(response, "The token is not valid.")


def test_hs256_signed_with_the_public_key_is_refused(oidc_issuer, native_payload):
    token = oidc_issuer.mint_hmac_with_public_key()
    refused(
        bearer(token).post("/agents", native_payload(), format="json"), "The token is not valid."
    )


def test_a_bad_signature_is_refused_without_saying_which_part_failed(oidc_issuer, native_payload):
    header, body, signature = oidc_issuer.mint().split(".")
    forged = f"{header}.{body}.{signature[:-6]}AAAAAA"
    refused(
        bearer(forged).post("/agents", native_payload(), format="json"), "The token is not valid."
    )


def test_an_unknown_kid_fetches_the_keys_again_once(oidc_issuer, native_payload):
    assert bearer(oidc_issuer.mint()).get("/api-keys").status_code == 200
    assert oidc_issuer.jwks_fetches() == 1
    unknown = oidc_issuer.mint(kid="k2")
    for _ in range(3):
        refused(
            bearer(unknown).get("/api-keys"),
            "The token is signed with a key its issuer does not publish.",
        )
    # fetched again for the first, not for the others (OIDC_KEYS_REFETCH_SECONDS)
    assert oidc_issuer.jwks_fetches() == 2


def test_a_rotated_key_is_found_by_fetching_the_keys_again(oidc_issuer, settings, native_payload):
    settings.OIDC_KEYS_REFETCH_SECONDS = 0
    assert bearer(oidc_issuer.mint()).get("/api-keys").status_code == 200
    oidc_issuer.publish("k1", "k2")  # the issuer rotates in a new key
    response = bearer(oidc_issuer.mint(kid="k2")).post("/agents", native_payload(), format="json")
    assert response.status_code == 201
    assert oidc_issuer.jwks_fetches() == 2


def test_an_issuer_that_does_not_answer_is_a_503_not_a_refusal(oidc_issuer, native_payload):
    oidc_issuer.server.route("/.well-known/openid-configuration", 500)
    response = bearer(oidc_issuer.mint()).post("/agents", native_payload(), format="json")
    assert response.status_code == 503
    assert response.json()["type"] == "/problems/issuer-unavailable"
    assert response["Retry-After"]
    assert not Agent.objects.exists()
    # left alone a while: the next token does not make the registry ask again
    again = bearer(oidc_issuer.mint()).post("/agents", native_payload(), format="json")
    assert again.status_code == 503
    asked = [r for r in oidc_issuer.server.requests if r.path.startswith("/.well-known/")]
    assert len(asked) == 1


def test_a_discovery_document_of_another_issuer_is_not_trusted(oidc_issuer, native_payload):
    oidc_issuer.server.json(
        "/.well-known/openid-configuration",
        b'{"issuer": "https://evil.example", "jwks_uri": "https://evil.example/jwks"}',
    )
    response = bearer(oidc_issuer.mint()).post("/agents", native_payload(), format="json")
    assert response.status_code == 503


def test_admin_groups_give_the_admin_scope(oidc_issuer, settings, native_payload):
    oidc_issuer.configure(settings, groups="groups", adminGroups=("registry-admins",))
    admin = bearer(oidc_issuer.mint(sub="ops", groups=["staff", "registry-admins"]))
    created = admin.post("/agents", native_payload(owner="someone"), format="json")
    assert created.status_code == 201
    assert created.json()["owner"] == "someone"
    member = bearer(oidc_issuer.mint(sub="eve", groups=["staff"]))
    response = member.post("/agents", native_payload(owner="someone"), format="json")
    assert response.status_code == 403


def test_a_group_claim_that_is_not_a_list_of_names_is_refused(oidc_issuer, settings):
    oidc_issuer.configure(settings, groups="groups")
    response = bearer(oidc_issuer.mint(groups={"admin": True})).get("/api-keys")
    refused(response, "The token's claim 'groups' must be a list of group names.")


def test_the_owner_template_reads_the_tokens_claims(oidc_issuer, settings, native_payload):
    oidc_issuer.configure(settings, owner="corp:{tenant}/{sub}")
    token = oidc_issuer.mint(sub="ann", tenant="sales")
    assert bearer(token).post("/agents", native_payload(), format="json").json()["owner"] == (
        "corp:sales/ann"
    )
    refused(
        bearer(oidc_issuer.mint(sub="ann")).post("/agents", native_payload(), format="json"),
        "The token has no claim 'tenant' to name its owner with.",
    )


def test_a_token_is_not_taken_when_no_issuer_is_configured(oidc_issuer, settings, native_payload):
    settings.OIDC_ISSUERS = ()
    response = bearer(oidc_issuer.mint()).post("/agents", native_payload(), format="json")
    refused(response, "The API key is not valid.")


def test_a_token_sign_in_is_audited_once_with_its_identity(oidc_issuer, native_payload):
    token = oidc_issuer.mint(sub="carol")
    client = bearer(token)
    client.post("/agents", native_payload(), format="json")
    client.get("/api-keys")
    (sign_in,) = AuditEntry.objects.filter(action="token.sign-in")
    assert sign_in.actor == "idp:carol"
    assert sign_in.after["issuer"] == oidc_issuer.url
    assert sign_in.after["subject"] == "carol"
    assert sign_in.after["owner"] == "idp:carol"
    assert sign_in.after["scope"] == "agent"
    (create,) = AuditEntry.objects.filter(action="agent.create")
    assert (create.actor, create.key_prefix) == ("idp:carol", "oidc")


def test_a_token_with_an_idempotency_key_is_told_to_use_an_api_key(oidc_issuer, native_payload):
    client = bearer(oidc_issuer.mint())
    response = client.post("/agents", native_payload(), format="json", HTTP_IDEMPOTENCY_KEY="once")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "Idempotency-Key"
    assert not Agent.objects.exists()


def test_a_token_sends_its_owners_heartbeats_not_anothers(oidc_issuer, native_payload):
    owner = bearer(oidc_issuer.mint(sub="carol"))
    agent = owner.post("/agents", native_payload(), format="json").json()
    assert owner.post(f"/agents/{agent['id']}/heartbeat").status_code == 200
    other = bearer(oidc_issuer.mint(sub="dave"))
    assert other.post(f"/agents/{agent['id']}/heartbeat").status_code == 403


def test_a_tokens_groups_travel_with_its_identity(oidc_issuer, settings):
    from registry.access.auth import principal_for_key

    oidc_issuer.configure(settings, groups="groups")
    principal = principal_for_key(oidc_issuer.mint(sub="ann", groups=["sales", "ops"]))
    assert (principal.owner, principal.groups, principal.is_admin) == (
        "idp:ann",
        ("ops", "sales"),
        False,
    )
    assert principal_for_key(oidc_issuer.mint(sub="ann", groups="sales")).groups == ("sales",)


def test_times_written_as_strings_are_read_as_numbers_not_a_500(oidc_issuer, native_payload):
    import time

    now = int(time.time())
    token = oidc_issuer.mint(iat=str(now), exp=str(now + 60))
    assert bearer(token).post("/agents", native_payload(), format="json").status_code == 201


def test_event_streams_count_a_tokens_identity_not_each_token(oidc_issuer):
    from registry.events.stream import stream_client

    def client(token: str) -> str:
        return stream_client({"HTTP_AUTHORIZATION": f"Bearer {token}", "REMOTE_ADDR": "10.0.0.9"})

    first = client(oidc_issuer.mint(sub="ann"))
    assert first.startswith("token:")
    assert client(oidc_issuer.mint(sub="ann", jti="2")) == first
    assert client(oidc_issuer.mint(sub="bob")) != first
    assert client(oidc_issuer.mint(sub="ann", exp=1_000_000, iat=999_000)) == "address:10.0.0.9"
