"""Staff sign-in to the admin in a real browser (Playwright driving chromium): the admin's
button, the local issuer's authorization endpoint, back to the registry with a code it
exchanges (PKCE) for an ID token, and the admin's index as staff."""

import pytest
from django.contrib.auth import get_user_model

pytest_plugins = ["tests.https_server", "tests.oidc_issuer"]
pytestmark = [pytest.mark.usefixtures("browser"), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def staff_issuer(oidc_issuer, settings):
    settings.ADMIN_OIDC_ISSUER = oidc_issuer.url
    settings.ADMIN_OIDC_CLIENT_ID = "registry-admin"
    settings.ADMIN_OIDC_CLIENT_SECRET = ""
    settings.ADMIN_OIDC_STAFF_GROUPS = ["registry-staff"]
    settings.ADMIN_OIDC_SUPERUSER_GROUPS = ["registry-root"]
    settings.ADMIN_PASSWORD_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = ["registry.access.staff.StaffSignInBackend"]
    oidc_issuer.serve_sign_in()
    return oidc_issuer


@pytest.fixture
def issuer_trusting_context(browser, live_server):
    """A browser profile that takes the local issuer's test certificate (the registry's own
    requests to the issuer check it against the test CA)."""
    ctx = browser.new_context(base_url=live_server.url, ignore_https_errors=True)
    yield ctx
    ctx.close()


def test_staff_sign_in_through_the_issuer_in_a_browser(staff_issuer, issuer_trusting_context):
    from playwright.sync_api import expect

    staff_issuer.next_claims = {"sub": "root", "groups": ["registry-root"], "name": "Root"}
    page = issuer_trusting_context.new_page()
    errors: list[str] = []  # script errors and policy violations (CSP reports on the console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    page.goto("/admin/")
    expect(page.locator("input[name=password]")).to_have_count(0)
    page.click("#staff-sign-in a")
    page.wait_for_url("**/admin/")
    expect(page.locator("#site-name")).to_be_visible()
    expect(page.locator("#user-tools")).to_contain_text("oidc:root")
    user = get_user_model().objects.get(username="oidc:root")
    assert user.is_superuser and user.is_staff
    token_request = next(r for r in staff_issuer.server.requests if r.path == "/token")
    assert b"client_secret" not in token_request.body  # a public client: PKCE alone
    assert errors == []
