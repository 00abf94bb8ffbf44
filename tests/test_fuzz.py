"""Schemathesis fuzzes every operation of /api/schema on a live server: no answer is a 5xx.

Every error answer must also be application/problem+json. Bounded and reproducible: a fixed
number of derandomized examples per operation and generation mode, so every run sends the
same requests; and offline, so it only ever talks to the live server on this machine.
"""

import copy
from collections.abc import Iterator
from functools import reduce
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from registry.access.keys import api_key_create
from registry.http.problems import PROBLEM_CONTENT_TYPE
from registry.outbound import fetch
from registry.outbound.fetch import FetchError

MAX_EXAMPLES = 20
FAILURES_SHOWN = 20

fuzz_settings = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    # A live server is slow next to in-process code, and schemathesis filters many inputs.
    suppress_health_check=list(HealthCheck),
)

QUEUE_ENDPOINT = {
    "name": "jobs",
    "transport": "Amqp",
    "protocol": "A2A",
    "address": "agents.summarizer.jobs",
    "livenessModel": "Ephemeral",
    "ttlSeconds": 300,
    "protocolMetadata": {"exchange": "agents", "bindings": [{"routingKey": "jobs"}]},
}

# Text a valid body is changed with: any code point (NUL, lone surrogates, letters that grow
# when lower-cased) and strings longer than the registry's columns.
odd_text = st.one_of(
    st.text(st.characters(), max_size=8),
    st.tuples(st.sampled_from(["x", "\u0130"]), st.integers(150, 2100)).map(lambda p: p[0] * p[1]),
)


def schema_load(url: str) -> schemathesis.BaseSchema:
    """The live OpenAPI schema, with request bodies typed as the JSON the registry reads.

    The registry's parser reads any body as JSON (a non-JSON body is a 400, not a 415), so
    the schema says */*, and schemathesis would spend its examples on YAML, XML and images.
    """
    raw = requests.get(f"{url}/api/schema", params={"format": "json"}, timeout=30).json()
    for path_item in raw["paths"].values():
        for operation in path_item.values():
            content = operation.get("requestBody", {}).get("content", {})
            if "*/*" in content:
                content["application/json"] = content.pop("*/*")
    return schemathesis.openapi.from_dict(raw, config=schemathesis.Config())


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


def modes_for(operation: schemathesis.APIOperation) -> list[GenerationMode]:
    # A negative case needs something schemathesis can make invalid; a bare path string is not.
    if len(operation.body) or len(operation.query) or len(operation.headers):
        return [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    return [GenerationMode.POSITIVE]


def real_path_ids(
    operation: schemathesis.APIOperation, real_ids: list[dict[str, str]]
) -> st.SearchStrategy[dict[str, str]]:
    names = {parameter.name for parameter in operation.path_parameters}
    return st.sampled_from(
        [{name: ids[name] for name in names} for ids in real_ids if names <= set(ids)]
    )


def cases(
    operation: schemathesis.APIOperation, mode: GenerationMode, real_ids: list[dict[str, str]]
) -> st.SearchStrategy[schemathesis.Case]:
    """Generated cases; for operations on an agent, some of them with the ids of real ones."""
    generated = operation.as_strategy(mode)
    names = {parameter.name for parameter in operation.path_parameters}
    if not names or not any(names <= set(ids) for ids in real_ids):
        return generated
    return st.one_of(
        generated,
        real_path_ids(operation, real_ids).flatmap(
            lambda ids: operation.as_strategy(mode, path_parameters=ids)
        ),
    )


def string_paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from string_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from string_paths(item, (*path, index))
    elif isinstance(value, str):
        yield path


def text_changed(doc: dict, path: tuple, text: str, append: bool) -> dict:
    doc = copy.deepcopy(doc)
    parent = reduce(lambda node, key: node[key], path[:-1], doc)
    parent[path[-1]] = parent[path[-1]] + text if append else text
    return doc


def cases_near_valid(
    operation: schemathesis.APIOperation,
    valid: dict[str, Any],
    auth: dict[str, str],
    real_ids: list[dict[str, str]],
) -> st.SearchStrategy[schemathesis.Case]:
    """A valid body with one string replaced or extended, sent for a real agent with ``auth``.

    Schemathesis alone rarely gets past validation (a card is any JSON in the schema); these
    reach the mapping and the database with odd text.
    """
    bodies = st.builds(
        text_changed,
        st.just(valid),
        st.sampled_from(list(string_paths(valid))),
        odd_text,
        st.booleans(),
    )
    ids = real_path_ids(operation, real_ids) if len(operation.path_parameters) else st.none()
    return st.tuples(bodies, ids).flatmap(
        lambda pair: operation.as_strategy(body=pair[0], path_parameters=pair[1], headers=auth)
    )


def content_type(response: schemathesis.Response) -> str:
    return next((v[0] for k, v in response.headers.items() if k.lower() == "content-type"), "")


def failure_report(response: schemathesis.Response, why: str) -> str:
    request = response.request
    body = request.body
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    return (
        f"{why}: {request.method} {request.url}\n"
        f"  key: {'Authorization' in request.headers}; body: {body!s:.500}\n"
        f"  -> {response.status_code} {content_type(response)}: {response.text_lossy():.500}"
    )


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


@pytest.mark.django_db(transaction=True)
def test_no_generated_request_gets_a_server_error(
    live_server, offline, settings, make_card, native_payload
):
    # Rate limits would turn most generated requests into 429s and leave the views unexercised.
    settings.RATE_LIMIT_READ = settings.RATE_LIMIT_WRITE = "1000000/min"
    settings.RATE_LIMIT_FETCH = settings.RATE_LIMIT_FETCH_ANON = "1000000/min"
    settings.RATE_LIMIT_AUTH_FAILURES = "1000000/min"
    _, key = api_key_create(owner="fuzzer", admin=False)
    auth = {"Authorization": f"Bearer {key}"}
    # Changed valid bodies carry an admin key, which may name an owner (half are sent with
    # the agent key instead: the headers drawn below replace the case's own).
    _, admin_key = api_key_create(owner="fuzzer", admin=True)
    admin = {"Authorization": f"Bearer {admin_key}"}
    native = native_payload()
    native["endpoints"].append(QUEUE_ENDPOINT)
    card = make_card()
    near_valid = {
        ("POST", "/agents"): {**native, "owner": "fuzzer"},
        ("PUT", "/agents/{agent_id}"): native,
        ("PATCH", "/agents/{agent_id}"): native,
        ("POST", "/agents/{agent_id}/endpoints"): {**QUEUE_ENDPOINT, "name": "extra"},
        ("POST", "/a2a/agents"): {"card": card, "owner": "fuzzer"},
        ("PUT", "/a2a/agents/{agent_id}"): {"card": card},
    }
    schema = schema_load(live_server.url)
    # GET /events streams without end: its parameters' problems are tested against a real
    # client (tests/registry/events/test_stream.py).
    operations = [
        op for op in (result.ok() for result in schema.get_all_operations()) if op.path != "/events"
    ]
    assert {(op.method.upper(), op.path) for op in operations} >= set(near_valid)
    failures: list[str] = []

    def exercise(case: schemathesis.Case, headers: dict[str, str]) -> None:
        response = case.call(base_url=live_server.url, headers=headers)
        if response.status_code >= 500:
            failures.append(failure_report(response, "server error"))
        elif response.status_code >= 400 and content_type(response) != PROBLEM_CONTENT_TYPE:
            failures.append(failure_report(response, "error is not problem+json"))

    for operation in operations:
        # Fresh agents for each operation: the DELETEs before it may have removed the last ones.
        real_ids = agents_seed(live_server.url, auth, card, copy.deepcopy(native))
        # A key of the fuzzer's owner the key operations may revoke or rotate.
        real_ids.append({"key_id": str(api_key_create(owner="fuzzer", label="spare")[0].id)})
        strategies = [cases(operation, mode, real_ids) for mode in modes_for(operation)]
        valid = near_valid.get((operation.method.upper(), operation.path))
        if valid is not None:
            strategies.append(cases_near_valid(operation, valid, admin, real_ids))
        for strategy in strategies:
            fuzz_settings(given(case=strategy, headers=st.sampled_from([auth, {}]))(exercise))()

    shown = "\n".join(failures[:FAILURES_SHOWN])
    assert not failures, f"{len(failures)} bad responses; the first {FAILURES_SHOWN}:\n{shown}"
