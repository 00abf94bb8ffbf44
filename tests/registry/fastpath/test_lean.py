"""The lean lane (registry.fastpath.lean): the hottest reads answered from WSGI, equal to Django's
answers, and every case but the ordinary one left to Django."""

import json

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import RequestFactory

from registry import extensions
from registry.fastpath.lean import LeanApplication


class Recorder:
    """Django's WSGI application, noting the paths it was asked for. As Django's test
    client does, it keeps the test's database connection open (its transaction)."""

    def __init__(self):
        self.django = WSGIHandler()
        self.paths: list[str] = []

    def __call__(self, environ, start_response):
        self.paths.append(environ["PATH_INFO"])
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            response = self.django(environ, start_response)
            response.close()
            return response
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)


def call(app, method: str, path: str, **meta) -> tuple[int, dict[str, str], bytes]:
    """``app``'s answer to the request: its status, headers and body (``meta``: the
    request's environ, and ``data`` and ``content_type`` of a body). The request has an
    ``X-Request-Id`` unless ``meta`` gives another (None: none), so that two answers to
    compare carry the same."""
    meta.setdefault("HTTP_X_REQUEST_ID", "lane-test")
    if meta["HTTP_X_REQUEST_ID"] is None:
        del meta["HTTP_X_REQUEST_ID"]
    environ = RequestFactory().generic(method, path, **meta).environ
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = int(status.split()[0])
        answer["headers"] = headers

    body = b"".join(app(environ, start_response))
    names = [name.lower() for name, _ in answer["headers"]]
    assert len(names) == len(set(names)), answer["headers"]  # no header twice
    return answer["status"], dict(answer["headers"]), body


def post(app, path: str, body, content_type="application/json", **meta):
    """``call`` of a POST of ``body`` (bytes as they are, anything else as JSON)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return call(app, "POST", path, data=raw, content_type=content_type, **meta)


@pytest.fixture
def lane():
    recorder = Recorder()
    return LeanApplication(recorder), recorder


def test_healthz_is_registered_by_the_core():
    routes = {route.prefix: route for route in extensions.lean_routes.read()}
    assert routes["/healthz"].exact and not routes["/healthz"].read_limited


def test_healthz_on_the_lane_equals_djangos_answer(lane, client):
    app, django = lane
    # The same request id for both: each answer echoes it.
    status, headers, body = call(app, "GET", "/healthz", HTTP_X_REQUEST_ID="same-id")
    assert django.paths == []  # answered on the lane
    expected = client.get("/healthz", HTTP_X_REQUEST_ID="same-id")
    assert (status, body) == (expected.status_code, expected.content)
    assert headers == {**dict(expected.headers.items()), "Content-Length": str(len(body))}


def test_healthz_head_has_the_headers_without_the_body(lane):
    app, django = lane
    status, headers, body = call(app, "HEAD", "/healthz")
    assert (status, body, django.paths) == (200, b"", [])
    assert headers["Content-Length"] == "16"


def test_healthz_answers_304_to_its_etag_and_200_to_another(lane, client):
    app, _ = lane
    etag = client.get("/healthz")["ETag"]
    status, headers, body = call(app, "GET", "/healthz", HTTP_IF_NONE_MATCH=etag)
    assert (status, body, headers["ETag"]) == (304, b"", etag)
    assert "Content-Type" not in headers and headers["X-Content-Type-Options"] == "nosniff"
    assert call(app, "GET", "/healthz", HTTP_IF_NONE_MATCH='"other"')[0] == 200
    assert call(app, "GET", "/healthz", HTTP_IF_NONE_MATCH="*")[0] == 304


def test_a_head_is_never_answered_304_as_django_leaves_it(lane, client):
    app, _ = lane
    etag = client.get("/healthz")["ETag"]
    assert client.head("/healthz", HTTP_IF_NONE_MATCH=etag).status_code == 200
    status, headers, body = call(app, "HEAD", "/healthz", HTTP_IF_NONE_MATCH=etag)
    assert (status, body, headers["ETag"]) == (200, b"", etag)


def test_other_paths_and_methods_go_to_django(lane):
    app, django = lane
    assert call(app, "GET", "/healthz/")[0] == 404  # exact: nothing may follow
    assert call(app, "POST", "/healthz")[0] == 405
    assert call(app, "GET", "/readyz")[0] in (200, 503)
    assert django.paths == ["/healthz/", "/healthz", "/readyz"]


def test_a_host_django_refuses_is_left_to_django(lane):
    app, django = lane
    status, headers, _ = call(app, "GET", "/healthz", HTTP_HOST="evil.example")
    assert status == 400 and headers["Content-Type"] == "application/problem+json"
    assert django.paths == ["/healthz"]


def test_preconditions_the_lane_does_not_evaluate_are_left_to_django(lane):
    app, django = lane
    assert call(app, "GET", "/healthz", HTTP_IF_MATCH='"x"')[0] == 412
    assert django.paths == ["/healthz"]


def test_https_answers_carry_hsts_as_djangos_do(settings, client):
    settings.SECURE_HSTS_SECONDS = 600
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    app = LeanApplication(Recorder())
    _, plain, _ = call(app, "GET", "/healthz")
    _, secure, _ = call(app, "GET", "/healthz", **{"wsgi.url_scheme": "https"})
    assert "Strict-Transport-Security" not in plain
    expected = client.get("/healthz", secure=True)["Strict-Transport-Security"]
    assert secure["Strict-Transport-Security"] == expected == "max-age=600; includeSubDomains"


def test_with_ssl_redirect_plain_http_is_left_to_django_unless_exempt(settings):
    settings.SECURE_SSL_REDIRECT = True
    recorder = Recorder()
    app = LeanApplication(recorder)
    assert call(app, "GET", "/healthz")[0] == 200  # exempt: load balancers use plain HTTP
    assert recorder.paths == []
    settings.SECURE_REDIRECT_EXEMPT = []
    recorder = Recorder()
    app = LeanApplication(recorder)
    status, headers, _ = call(app, "GET", "/healthz")
    assert status == 301 and headers["Location"].startswith("https://")
    assert recorder.paths == ["/healthz"]
    assert call(app, "GET", "/healthz", **{"wsgi.url_scheme": "https"})[0] == 200
    assert recorder.paths == ["/healthz"]


def test_the_served_application_is_the_lane():
    from registry import wsgi

    assert isinstance(wsgi.application, LeanApplication)
    assert wsgi.application.django_application is wsgi.django_application
