"""Under DEBUG (``make run``), a refusal that a development setting would lift names the
setting and the value to give; outside DEBUG the message says nothing of the settings."""

import pytest

from registry.outbound.fetch import FetchError, fetch, url_check
from tests.registry.outbound.conftest import CARD

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.usefixtures("fetch_settings")


def refusal(url: str) -> str:
    with pytest.raises(FetchError) as caught:
        url_check(url)
    return caught.value.detail


def test_plain_http_to_a_local_receiver_names_both_settings_under_debug(settings):
    settings.DEBUG, settings.FETCH_ALLOWED_HOSTS = True, []
    detail = refusal("http://127.0.0.1:8080/hooks")
    assert "only https URLs are allowed" in detail
    assert "set FETCH_ALLOW_HTTP_HOSTS=127.0.0.1 and FETCH_ALLOWED_HOSTS=127.0.0.1" in detail


def test_plain_http_to_an_allowed_host_names_only_the_http_setting(settings):
    settings.DEBUG = True
    settings.FETCH_ALLOWED_HOSTS, settings.FETCH_ALLOW_HTTP_HOSTS = ["localhost"], ["127.0.0.1"]
    detail = refusal("http://localhost:8080/hooks")
    assert detail.endswith(
        "DEBUG: set FETCH_ALLOW_HTTP_HOSTS=127.0.0.1,localhost to allow it "
        "(local development only)."
    )


def test_a_loopback_address_names_fetch_allowed_hosts_under_debug(settings):
    settings.DEBUG, settings.FETCH_ALLOWED_HOSTS = True, []
    detail = refusal("https://127.0.0.1:8443/.well-known/entity-card.json")
    assert "resolves to 127.0.0.1, which is not a public address" in detail
    assert "set FETCH_ALLOWED_HOSTS=127.0.0.1 to allow it" in detail


def test_an_untrusted_certificate_names_fetch_ca_bundle_under_debug(settings, https_server):
    settings.DEBUG, settings.FETCH_CA_BUNDLE = True, None
    https_server.json("/card", CARD)
    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"))
    assert caught.value.reason == "tls-error"
    assert "set FETCH_CA_BUNDLE=" in caught.value.detail


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hooks", "https://127.0.0.1:8443/card"])
def test_outside_debug_refusals_name_no_setting(settings, url):
    settings.DEBUG, settings.FETCH_ALLOWED_HOSTS = False, []
    assert "FETCH_" not in refusal(url)
