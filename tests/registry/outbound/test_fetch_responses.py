"""The safe fetcher against a local HTTPS server: the document and the URL fetched, the size
cap, redirects and their limit, the schemes allowed, content types, statuses, strict JSON,
timeouts, untrusted certificates, closed ports and unknown hosts."""

import socket

import pytest

from registry.outbound.fetch import FetchError, fetch, fetch_json
from tests.registry.outbound.conftest import CARD

# A plugin rather than imported names: ruff reports every imported fixture
# used as an argument as a redefinition (F811).
pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.usefixtures("fetch_settings")


def test_fetch_json_returns_the_document_and_the_url_fetched(https_server):
    https_server.json("/.well-known/agent-card.json", CARD)

    result, document = fetch_json(https_server.url("/.well-known/agent-card.json"))

    assert document == {"name": "Weather agent", "version": "1.0.0"}
    assert result.status == 200
    assert result.body == CARD
    assert result.url == https_server.url("/.well-known/agent-card.json")
    assert result.headers["content-type"] == "application/json"


def test_fetch_works_by_ip_address_too(https_server):
    https_server.json("/card", CARD)

    result = fetch(https_server.url("/card", host="127.0.0.1"))

    assert result.body == CARD


def test_requests_carry_a_user_agent_naming_the_registry(settings, https_server):
    settings.REGISTRY_BASE_URL = "https://registry.example"
    https_server.json("/card", CARD)

    fetch(https_server.url("/card"))

    [request] = https_server.requests
    assert request.headers["User-Agent"].startswith("a2a-registry/")
    assert request.headers["User-Agent"].endswith("(+https://registry.example)")
    assert request.headers["Accept"] == "application/json"


@pytest.mark.parametrize("close_delimited", [False, True], ids=["content-length", "streamed"])
def test_a_body_over_the_size_cap_is_refused(settings, https_server, close_delimited):
    settings.FETCH_MAX_BYTES = 1000
    https_server.route(
        "/big",
        200,
        {"Content-Type": "application/json"},
        b"[" + b"0," * 50_000 + b"0]",
        close_delimited=close_delimited,
    )

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/big"))

    assert caught.value.reason == "too-large"
    assert "1000 bytes" in caught.value.detail


def test_max_bytes_argument_overrides_the_setting(https_server):
    https_server.json("/card", CARD)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"), max_bytes=len(CARD) - 1)
    result = fetch(https_server.url("/card"), max_bytes=len(CARD))

    assert caught.value.reason == "too-large"
    assert result.body == CARD


def test_a_streamed_body_exactly_at_the_cap_is_accepted(settings, https_server):
    settings.FETCH_MAX_BYTES = len(CARD)
    https_server.route(
        "/card", 200, {"Content-Type": "application/json"}, CARD, close_delimited=True
    )

    assert fetch(https_server.url("/card")).body == CARD


def test_a_same_origin_redirect_is_followed(https_server):
    https_server.redirect("/.well-known/agent.json", "/.well-known/agent-card.json", 301)
    https_server.json("/.well-known/agent-card.json", CARD)

    result = fetch(https_server.url("/.well-known/agent.json"))

    assert result.body == CARD
    assert result.url == https_server.url("/.well-known/agent-card.json")
    assert [r.path for r in https_server.requests] == [
        "/.well-known/agent.json",
        "/.well-known/agent-card.json",
    ]


def test_a_cross_origin_redirect_is_not_followed_by_default(https_server):
    https_server.redirect("/card", https_server.url("/card", host="127.0.0.1"))

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"))

    assert caught.value.reason == "cross-origin-redirect"
    assert len(https_server.requests) == 1


def test_a_cross_origin_redirect_is_followed_when_allowed(https_server):
    https_server.redirect("/card", https_server.url("/real", host="127.0.0.1"))
    https_server.json("/real", CARD)

    result = fetch(https_server.url("/card"), cross_origin_redirects=True)

    assert result.url == https_server.url("/real", host="127.0.0.1")
    assert result.body == CARD


def test_a_redirect_to_a_private_address_is_refused_without_connecting(
    settings,
    https_server,
    tcp_listener,
):
    settings.FETCH_ALLOWED_HOSTS = ["localhost"]
    https_server.redirect("/card", f"https://127.0.0.1:{tcp_listener.port}/card")

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"), cross_origin_redirects=True)

    assert caught.value.reason == "blocked-address"
    assert caught.value.url == f"https://127.0.0.1:{tcp_listener.port}/card"
    assert tcp_listener.connections == 0


def test_a_redirect_to_plain_http_is_refused(https_server, http_server):
    https_server.redirect("/card", http_server.url("/card"))
    http_server.json("/card", CARD)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"), cross_origin_redirects=True)

    assert caught.value.reason == "scheme-not-allowed"
    assert http_server.requests == []


def _redirect_chain(server, length):
    for step in range(length):
        server.redirect(f"/hop{step}", f"/hop{step + 1}")
    server.json(f"/hop{length}", CARD)
    return server.url("/hop0")


def test_up_to_the_redirect_limit_is_followed(https_server):
    assert fetch(_redirect_chain(https_server, 3)).body == CARD


def test_more_redirects_than_the_limit_are_refused(https_server):
    with pytest.raises(FetchError) as caught:
        fetch(_redirect_chain(https_server, 4))

    assert caught.value.reason == "too-many-redirects"
    assert len(https_server.requests) == 4


def test_the_redirect_limit_comes_from_settings_or_the_argument(settings, https_server):
    settings.FETCH_MAX_REDIRECTS = 0
    url = _redirect_chain(https_server, 1)

    with pytest.raises(FetchError) as caught:
        fetch(url)

    assert caught.value.reason == "too-many-redirects"
    assert fetch(url, max_redirects=1).body == CARD


def test_plain_http_is_refused_without_connecting(http_server):
    http_server.json("/card", CARD)

    with pytest.raises(FetchError) as caught:
        fetch(http_server.url("/card"))

    assert caught.value.reason == "scheme-not-allowed"
    assert http_server.connections == 0


def test_plain_http_is_allowed_for_listed_hosts(settings, http_server):
    settings.FETCH_ALLOW_HTTP_HOSTS = ["localhost"]
    http_server.json("/card", CARD)

    assert fetch(http_server.url("/card")).body == CARD
    with pytest.raises(FetchError) as caught:
        fetch(http_server.url("/card", host="127.0.0.1"))
    assert caught.value.reason == "scheme-not-allowed"


@pytest.mark.parametrize("url", ["ftp://localhost/card", "file:///etc/passwd", "gopher://x/"])
def test_other_schemes_are_refused(url, connect_attempts):
    with pytest.raises(FetchError) as caught:
        fetch(url)

    assert caught.value.reason == "scheme-not-allowed"
    assert connect_attempts == []


@pytest.mark.parametrize(
    "url", ["not a url", "/relative/card.json", "https://", "https://user:secret@localhost/"]
)
def test_invalid_urls_are_refused(url, connect_attempts):
    with pytest.raises(FetchError) as caught:
        fetch(url)

    assert caught.value.reason == "invalid-url"
    assert caught.value.url == url
    assert connect_attempts == []


@pytest.mark.parametrize("content_type", ["text/html", "text/plain; charset=utf-8", None])
def test_a_non_json_content_type_is_refused(https_server, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    https_server.route("/card", 200, headers, CARD)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"))

    assert caught.value.reason == "not-json"
    assert fetch(https_server.url("/card"), accept_json=False).body == CARD


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "application/jwk-set+json"],
)
def test_json_content_types_are_accepted(https_server, content_type):
    https_server.route("/card", 200, {"Content-Type": content_type}, CARD)

    assert fetch(https_server.url("/card")).body == CARD


@pytest.mark.parametrize("status", [404, 500])
def test_a_non_2xx_status_is_an_error(https_server, status):
    https_server.route("/card", status, {"Content-Type": "application/json"}, b"{}")

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"))

    assert caught.value.reason == "http-status"
    assert caught.value.status == status
    assert str(status) in caught.value.detail


@pytest.mark.parametrize(
    "body", [b"{", b'{"name": "a", "name": "b"}', b"NaN", b"\xff\xfe"], ids=repr
)
def test_a_body_that_is_not_strict_json_is_refused(https_server, body):
    https_server.json("/card", body)

    result = fetch(https_server.url("/card"))
    with pytest.raises(FetchError) as caught:
        result.json()
    with pytest.raises(FetchError) as caught_again:
        fetch_json(https_server.url("/card"))

    assert caught.value.reason == caught_again.value.reason == "invalid-json"
    assert caught.value.url == https_server.url("/card")


def test_a_server_slower_than_the_read_timeout_times_out(settings, https_server):
    settings.FETCH_READ_TIMEOUT = 0.2
    https_server.route("/slow", 200, {"Content-Type": "application/json"}, CARD, delay=30)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/slow"))

    assert caught.value.reason == "timeout"


def test_the_timeout_argument_overrides_the_settings(https_server):
    https_server.route("/slow", 200, {"Content-Type": "application/json"}, CARD, delay=30)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/slow"), timeout=0.2)

    assert caught.value.reason == "timeout"


def test_a_body_dripped_slowly_hits_the_total_time_limit(settings, https_server):
    settings.FETCH_TOTAL_TIMEOUT = 0.5
    https_server.route("/drip", 200, {"Content-Type": "application/json"}, CARD, drip=0.1)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/drip"))

    assert caught.value.reason == "timeout"


def test_an_untrusted_certificate_is_a_tls_error(settings, https_server):
    settings.FETCH_CA_BUNDLE = None
    https_server.json("/card", CARD)

    with pytest.raises(FetchError) as caught:
        fetch(https_server.url("/card"))

    assert caught.value.reason == "tls-error"
    assert https_server.requests == []


def test_a_closed_port_is_a_connect_failure():
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]

    with pytest.raises(FetchError) as caught:
        fetch(f"https://127.0.0.1:{port}/card")

    assert caught.value.reason == "connect-failed"


def test_an_unknown_host_is_a_dns_failure(resolver):
    resolver.answers["agent.example"] = []

    with pytest.raises(FetchError) as caught:
        fetch("https://agent.example/card")

    assert caught.value.reason == "dns-failure"
