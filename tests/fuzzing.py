"""What the schemathesis tests share: the live schema, real ids to send, an offline fetcher."""

from typing import Any

import pytest
import requests
import schemathesis

from registry.outbound import fetch
from registry.outbound.fetch import FetchError

QUEUE_ENDPOINT = {
    "name": "jobs",
    "transport": "Amqp",
    "protocol": "A2A",
    "address": "agents.summarizer.jobs",
    "livenessModel": "Ephemeral",
    "ttlSeconds": 300,
    "protocolMetadata": {"exchange": "agents", "bindings": [{"routingKey": "jobs"}]},
}


def schema_raw(url: str) -> dict[str, Any]:
    """The live OpenAPI document, with request bodies typed as the JSON the registry reads.

    The registry's parser reads any body as JSON (a non-JSON body is a 400, not a 415); a
    body declared as */* would have schemathesis spend its examples on YAML, XML and images.
    """
    raw = requests.get(f"{url}/api/schema", params={"format": "json"}, timeout=30).json()
    for path_item in raw["paths"].values():
        for operation in path_item.values():
            content = operation.get("requestBody", {}).get("content", {})
            if "*/*" in content:
                content["application/json"] = content.pop("*/*")
    return raw


def schema_load(url: str) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(schema_raw(url), config=schemathesis.Config())


def agents_seed(
    url: str, auth: dict[str, str], card: dict[str, Any], payload: dict[str, Any]
) -> list[dict[str, str]]:
    """Register a native agent (with a queue endpoint) and a card agent; their path ids."""
    native = requests.post(f"{url}/agents", json=payload, headers=auth, timeout=30)
    by_card = requests.post(f"{url}/a2a/agents", json={"card": card}, headers=auth, timeout=30)
    assert native.status_code == 201, native.text
    assert by_card.ok, by_card.text  # 200 when the same card was registered before
    native, by_card = native.json(), by_card.json()
    return [
        {"agent_id": native["id"], "endpoint_id": native["endpoints"][0]["id"]},
        {"agent_id": native["id"], "endpoint_id": native["endpoints"][1]["id"]},
        {"agent_id": by_card["id"], "endpoint_id": by_card["endpoints"][0]["id"]},
    ]


def content_type(response: schemathesis.Response) -> str:
    return next((v[0] for k, v in response.headers.items() if k.lower() == "content-type"), "")


@pytest.fixture
def offline(settings, monkeypatch):
    """Registration by domain or URL and AAP checks fetch: here every lookup fails at once."""
    settings.DISCOVERY_DNS_NAMESERVERS = ["127.0.0.1"]
    settings.DISCOVERY_DNS_PORT = 9  # nothing answers
    settings.DISCOVERY_DNS_TIMEOUT = 0.2

    def unresolved(host: str, port: int, url: str, deadline: float) -> tuple[str, ...]:
        raise FetchError("dns-failure", url, f"{url} was not fetched: the fuzz test is offline.")

    # Generated hosts are real names on the internet; the fetcher must not look them up.
    monkeypatch.setattr(fetch, "_resolve", unresolved)


@pytest.fixture
def unlimited(settings):
    """Rate limits would turn most generated requests into 429s and leave the views unexercised."""
    settings.RATE_LIMIT_READ = settings.RATE_LIMIT_WRITE = "1000000/min"
    settings.RATE_LIMIT_FETCH = settings.RATE_LIMIT_FETCH_ANON = "1000000/min"
    settings.RATE_LIMIT_AUTH_FAILURES = "1000000/min"
