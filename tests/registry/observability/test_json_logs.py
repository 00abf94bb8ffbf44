"""LOG_FORMAT=json with LOG_REQUESTS: a line per request with its id, route, status,
duration and the API key's prefix; never a key, a token or an Authorization value."""

import io
import json
import logging
import uuid

import pytest

from registry.access.models import ApiKey
from registry.http.request_ids import RequestIdFilter
from registry.logs import JsonFormatter


@pytest.fixture
def json_log(settings):
    """What the root handler would write with LOG_FORMAT=json, while the test runs."""
    settings.LOG_REQUESTS = True
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    saved = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield written
    root.removeHandler(handler)
    root.setLevel(saved)


def test_each_request_is_a_json_line_with_its_id_route_status_and_keys_prefix(
    json_log, client, make_key
):
    key = make_key("alice")
    answer = client.get(
        f"/agents/{uuid.uuid4()}", HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_X_REQUEST_ID="ops-log-1"
    )
    assert answer.status_code == 404
    records = [json.loads(line) for line in json_log.getvalue().splitlines()]
    (line,) = [r for r in records if r["logger"] == "registry.requests"]
    assert line["request_id"] == "ops-log-1"
    assert (line["method"], line["route"], line["status"]) == ("GET", "/agents/<str:agent_id>", 404)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["api_key_prefix"] == ApiKey.objects.get(owner="alice").prefix
    assert {"time", "level", "message"} <= set(line)
    # Django's own warning about the 404 carries the id too, not the request object.
    (warning,) = [r for r in records if r["logger"] == "django.request"]
    assert warning["request_id"] == "ops-log-1" and "request" not in warning


def test_no_key_token_or_authorization_value_is_ever_logged(json_log, client, make_key, settings):
    settings.METRICS_TOKEN = "metrics-token-" + uuid.uuid4().hex
    settings.METRICS_ALLOWED_ADDRESSES = []
    key = make_key("alice")
    wrong = "rk_" + uuid.uuid4().hex
    secrets = [key, wrong, settings.METRICS_TOKEN, "Basic dXNlcjpwYXNzd29yZA=="]
    calls = [
        ("get", "/agents", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),
        ("get", "/agents", {"HTTP_X_API_KEY": key}),
        ("get", "/agents", {"HTTP_AUTHORIZATION": f"Bearer {wrong}"}),
        ("get", "/metrics", {"HTTP_AUTHORIZATION": f"Bearer {settings.METRICS_TOKEN}"}),
        ("get", "/metrics", {"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNzd29yZA=="}),
        ("post", "/agents", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),  # no body: 400
        ("get", f"/no/such/{key}", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),
    ]
    statuses = [getattr(client, m)(path, **headers).status_code for m, path, headers in calls]
    assert statuses == [200, 200, 401, 200, 404, 400, 404]
    written = json_log.getvalue()
    assert len([r for r in map(json.loads, written.splitlines()) if r.get("route")]) == 7
    assert [secret for secret in secrets if secret in written] == []
