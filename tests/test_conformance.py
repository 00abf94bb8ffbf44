"""Schemathesis checks that the API does what its OpenAPI document says, on a live server.

Every operation of /api/schema (but the endless ``GET /events`` stream), with an admin key,
an agent key, none and an unknown one: no 5xx, no status the document does not list, every
answer of the content type and the schema it documents. Then the stateful phase follows the
document's links from each create to its read, update and delete, with each of the first
three. Bounded and reproducible: a fixed number of derandomized examples per operation and
key; offline (no lookup leaves the host). About two minutes on a busy two-core machine.
"""

import copy

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation.stateful import run_state_machine_as_test
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from registry.access.keys import api_key_create
from tests.fuzzing import (  # noqa: F401 (fixtures)
    QUEUE_ENDPOINT,
    agents_seed,
    content_type,
    offline,
    schema_raw,
    unlimited,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 5
STATEFUL_SCENARIOS = 15
STATEFUL_STEPS = 6
FAILURES_SHOWN = 25
# Requests that once answered a 500, sent to a real agent with every key.
REGRESSIONS = {
    # A partial update reached the nested endpoint's validation partial: a KeyError.
    ("PATCH", "/agents/{agent_id}"): [
        {"endpoints": [{"name": "primary", "protocol": "A2A", "address": "https://a.example/x"}]},
        {"endpoints": [{"name": "primary", "protocol": "A2A", "transport": "Http"}]},
    ],
}
# Query strings that once made a 500, tried besides the generated ones.
QUERY_REGRESSIONS = {
    ("GET", "/ard/agents"): [
        {"filter": "createdAfter > '2020-13-01T00:00:00Z'"},
        {"filter": "createdAfter > '2020-01-01T00:00:00+23:59'"},
        {"filter": "displayName = 'a\x00b'"},
    ],
}

bounded = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def failure_report(case: schemathesis.Case, who: str, error: BaseException) -> str:
    first = str(error).strip().splitlines()
    return f"{case.method} {case.formatted_path} ({who}): {' | '.join(first[:6]):.600}"


def path_ids(operation, real_ids: list[dict[str, str]]) -> list[dict[str, str]]:
    names = {parameter.name for parameter in operation.path_parameters}
    return [{name: ids[name] for name in names} for ids in real_ids if names <= set(ids)]


def exercise_with(base_url: str, who: str, headers: dict[str, str], failures: list[str]):
    def exercise(case: schemathesis.Case) -> None:
        # A generated Authorization header would replace the key under test.
        for name in [name for name in case.headers or {} if name.lower() == "authorization"]:
            del case.headers[name]
        try:
            case.call_and_validate(base_url=base_url, headers=headers, checks=CHECKS)
        except (AssertionError, Failure, FailureGroup) as error:
            failures.append(failure_report(case, who, error))

    return exercise


@pytest.fixture
def keys(db) -> dict[str, dict[str, str]]:
    _, agent_key = api_key_create(owner="conformer", admin=False)
    _, admin_key = api_key_create(owner="conformer", admin=True)
    return {
        "admin key": {"Authorization": f"Bearer {admin_key}"},
        "agent key": {"Authorization": f"Bearer {agent_key}"},
        "no key": {},
        # An unknown key is refused wherever a key is read (401), and ignored where not.
        "unknown key": {"Authorization": "Bearer unknown-key"},
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("offline", "unlimited")
def test_every_operation_answers_as_documented(live_server, keys, make_card, native_payload):
    raw = schema_raw(live_server.url)
    schema = schemathesis.openapi.from_dict(raw, config=schemathesis.Config())
    operations = [
        op for op in (result.ok() for result in schema.get_all_operations()) if op.path != "/events"
    ]
    native = native_payload()
    native["endpoints"].append(QUEUE_ENDPOINT)
    card = make_card()
    failures: list[str] = []

    for operation in operations:
        # Fresh agents for each operation: the DELETEs before it may have removed the last.
        real_ids = agents_seed(live_server.url, keys["agent key"], card, copy.deepcopy(native))
        real_ids.append({"key_id": str(api_key_create(owner="conformer", label="spare")[0].id)})
        known = path_ids(operation, real_ids)
        for who, headers in keys.items():
            strategies = [operation.as_strategy(GenerationMode.POSITIVE)]
            if known:
                strategies.append(
                    st.sampled_from(known).flatmap(
                        lambda ids, operation=operation: operation.as_strategy(
                            GenerationMode.POSITIVE, path_parameters=ids
                        )
                    )
                )

            for body in REGRESSIONS.get((operation.method.upper(), operation.path), []):
                strategies.append(
                    st.sampled_from(known).flatmap(
                        lambda ids, operation=operation, body=body: operation.as_strategy(
                            path_parameters=ids, body=body
                        )
                    )
                )

            for query in QUERY_REGRESSIONS.get((operation.method.upper(), operation.path), []):
                strategies.append(
                    st.sampled_from(known).flatmap(
                        lambda ids, operation=operation, query=query: operation.as_strategy(
                            path_parameters=ids, query=query
                        )
                    )
                )

            exercise = exercise_with(live_server.url, who, headers, failures)
            bounded(given(case=st.one_of(strategies))(exercise))()

    shown = "\n".join(failures[:FAILURES_SHOWN])
    assert not failures, f"{len(failures)} answers not as documented; the first:\n{shown}"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("offline", "unlimited")
@pytest.mark.parametrize("who", ["admin key", "agent key", "no key"])
def test_links_lead_from_each_create_to_its_reads_and_writes(live_server, keys, who):
    raw = schema_raw(live_server.url)
    raw["paths"].pop("/events", None)
    schema = schemathesis.openapi.from_dict(raw, config=schemathesis.Config())
    headers = keys[who]
    base = schema.as_state_machine()

    class Scenarios(base):
        def get_call_kwargs(self, case):
            return {"base_url": live_server.url, "headers": headers}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs or None)

    run_state_machine_as_test(
        Scenarios,
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
