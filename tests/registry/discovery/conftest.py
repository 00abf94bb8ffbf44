"""Fixtures and helpers of the lean lane's first-query tests: a dozen agents of three kinds,
and the answers of the view and of the lane to a query asked for the first time."""

import pytest
from django.core.cache import cache

from registry.fastpath.lean import LeanApplication
from tests.registry.fastpath.test_lean import Recorder, call


@pytest.fixture
def agents(alice, native_payload):
    kinds = [
        ("Weather", "forecasts", ["climate", "nlp"]),
        ("Invoice", "extracts invoices", ["finance"]),
        ("Weather Invoice", "bills for forecasts", ["finance", "climate"]),
    ]
    for index in range(12):
        name, words, tags = kinds[index % len(kinds)]
        payload = native_payload(
            name=f"{name} {index}",
            description=f"Helps with {words} number {index}",
            capabilities=[{"name": f"{words.split()[-1]} skill", "tags": tags}],
        )
        response = alice.post("/agents", payload, format="json")
        assert response.status_code == 201, response.content


def view_answer(path: str, **meta):
    """The view's own answer, found afresh (nothing cached)."""
    cache.clear()
    django = Recorder()
    answer = call(django, "GET", path, **meta)
    assert django.paths == ["/discover/agents"]
    return answer


def lane_answer(path: str, **meta):
    """The lane's answer to the query asked for the first time, and whether Django was asked."""
    cache.clear()
    django = Recorder()
    return call(LeanApplication(django), "GET", path, **meta), bool(django.paths)


def spy_answer(function, answers: list):
    """``function``, noting whether each call found something (True) or None (False)."""

    def called(*args, **kwargs):
        answer = function(*args, **kwargs)
        answers.append(answer is not None)
        return answer

    return called
