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
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from registry.access.keys import api_key_create
from registry.http.problems import PROBLEM_CONTENT_TYPE
from tests.fuzzing import (  # noqa: F401 (fixtures)
    QUEUE_ENDPOINT,
    agents_seed,
    content_type,
    offline,
    schema_load,
    unlimited,
)

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

# Text a valid body is changed with: any code point (NUL, lone surrogates, letters that grow
# when lower-cased) and strings longer than the registry's columns.
odd_text = st.one_of(
    st.text(st.characters(), max_size=8),
    st.tuples(st.sampled_from(["x", "\u0130"]), st.integers(150, 2100)).map(lambda p: p[0] * p[1]),
)


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


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("offline", "unlimited")
def test_no_generated_request_gets_a_server_error(live_server, make_card, native_payload):
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
