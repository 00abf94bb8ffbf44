"""Staff sign-in to the admin through the local issuer: the authorization code flow with
PKCE and a nonce, staff and superuser status from the group claim, a caller in no accepted
group refused, and the password form switched off."""

import ssl
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from registry.access.models import AuditEntry

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]
pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_issuer(oidc_issuer, settings):
    settings.ADMIN_OIDC_ISSUER = oidc_issuer.url
    settings.ADMIN_OIDC_CLIENT_ID = "registry-admin"
    settings.ADMIN_OIDC_CLIENT_SECRET = "client-secret"
    settings.ADMIN_OIDC_STAFF_GROUPS = ["registry-staff"]
    settings.ADMIN_OIDC_SUPERUSER_GROUPS = ["registry-root"]
    oidc_issuer.serve_sign_in()
    return oidc_issuer


def sign_in(issuer, ca_bundle, client: Client, **claims):
    """Through the whole flow: the registry, the issuer's authorization endpoint, back."""
    issuer.next_claims = claims
    start = client.get("/oidc/authenticate/", {"next": "/admin/"})
    assert start.status_code == 302
    query = parse_qs(urlsplit(start["Location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"][0]
    assert query["nonce"][0] and query["state"][0]
    authorized = httpx.get(start["Location"], verify=ssl.create_default_context(cafile=ca_bundle))
    back = urlsplit(authorized.headers["location"])
    return client.get(back.path, parse_qs(back.query))


def test_a_member_of_the_staff_group_signs_in_as_staff(staff_issuer, ca_bundle):
    client = Client()
    done = sign_in(staff_issuer, ca_bundle, client, sub="ann", groups=["registry-staff"])
    assert done.status_code == 302 and done["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    user = get_user_model().objects.get(username="oidc:ann")
    assert (user.is_staff, user.is_superuser, user.has_usable_password()) == (True, False, False)
    token_request = next(r for r in staff_issuer.server.requests if r.path == "/token")
    assert b"code_verifier=" in token_request.body
    assert b"client_secret=client-secret" in token_request.body
    entry = AuditEntry.objects.get(action="staff.sign-in")
    assert entry.after["subject"] == "ann" and entry.after["staff"] is True


def test_the_superuser_group_makes_a_superuser_and_losing_it_unmakes_one(staff_issuer, ca_bundle):
    sign_in(staff_issuer, ca_bundle, Client(), sub="root", groups=["registry-root"])
    assert get_user_model().objects.get(username="oidc:root").is_superuser
    sign_in(staff_issuer, ca_bundle, Client(), sub="root", groups=["registry-staff"])
    user = get_user_model().objects.get(username="oidc:root")
    assert (user.is_staff, user.is_superuser) == (True, False)


def test_a_caller_in_no_accepted_group_is_not_signed_in(staff_issuer, ca_bundle):
    client = Client()
    done = sign_in(staff_issuer, ca_bundle, client, sub="eve", groups=["sales"])
    assert done["Location"] == "/admin/login/?signin=failed"
    assert client.get("/admin/").status_code == 302  # to the sign-in page
    assert not get_user_model().objects.filter(username="oidc:eve").exists()
    assert AuditEntry.objects.filter(action="staff.sign-in-refused").count() == 1
    page = client.get("/admin/login/?signin=failed").content.decode()
    assert 'id="signin-failed"' in page


def test_a_code_brought_back_to_another_browser_signs_nobody_in(staff_issuer, ca_bundle):
    client = Client()
    staff_issuer.next_claims = {"sub": "ann", "groups": ["registry-staff"]}
    start = client.get("/oidc/authenticate/")
    authorized = httpx.get(start["Location"], verify=ssl.create_default_context(cafile=ca_bundle))
    back = urlsplit(authorized.headers["location"])
    other = Client()  # another browser: no state, no verifier of this sign-in
    assert other.get(back.path, parse_qs(back.query))["Location"].endswith("signin=failed")
    assert not get_user_model().objects.filter(username="oidc:ann").exists()


def test_the_login_page_offers_the_provider_and_the_password_form(staff_issuer):
    page = Client().get("/admin/login/").content.decode()
    assert 'id="staff-sign-in"' in page
    assert 'name="password"' in page


def test_password_login_turned_off_hides_the_form_and_refuses_passwords(staff_issuer, settings):
    get_user_model().objects.create_superuser("old", password="a-long-password")
    settings.ADMIN_PASSWORD_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = ["registry.access.staff.StaffSignInBackend"]
    client = Client()
    page = client.get("/admin/login/").content.decode()
    assert 'name="password"' not in page and 'id="staff-sign-in"' in page
    client.post("/admin/login/", {"username": "old", "password": "a-long-password"})
    assert client.get("/admin/").status_code == 302
    assert not client.login(username="old", password="a-long-password")


def test_without_an_issuer_the_sign_in_routes_are_not_found(settings):
    settings.ADMIN_OIDC_ISSUER = ""
    assert Client().get("/oidc/authenticate/").status_code == 404
