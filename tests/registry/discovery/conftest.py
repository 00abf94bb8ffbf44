"""Fixtures and helpers of the discovery tests: the lean lane's first queries (a dozen
agents of three kinds, the answers of the view and of the lane to a query asked for the
first time) and, at scale, A2A cards made and imported in bulk, a population of four, and
the names a listing gives."""

import copy

import pytest
from django.core.cache import cache

from registry.fastpath.lean import LeanApplication
from registry.signals import writes_batched
from tests.conftest import BASE_CARD
from tests.registry.fastpath.test_lean import Recorder, call


@pytest.fixture
def agents(alice, native_payload):
    dozen_agents_post(alice, native_payload)


def dozen_agents_post(alice, native_payload) -> None:
    """The dozen agents of three kinds, posted by ``alice`` (a keyed client)."""
    kinds = [
        ("Weather", "forecasts", ["climate", "nlp"]),
        ("Invoice", "extracts invoices", ["finance"]),
        ("Weather Invoice", "bills for forecasts", ["finance", "climate"]),
    ]
    # One agents_written at the end for the twelve (as a bulk write sends it): the same rows,
    # in half the time of a write each.
    with writes_batched():
        _agents_post(alice, native_payload, kinds)


def _agents_post(alice, native_payload, kinds) -> None:
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


def cards_bulk_import(**kwargs) -> int:
    from protocols.a2a.registration.bulk import cards_bulk_import

    return cards_bulk_import(**kwargs)


def card(name, *, url, skills=(), provider="Acme", binding="JSONRPC", version="1.0", **extra):
    doc = copy.deepcopy(BASE_CARD)
    doc["name"] = name
    doc["description"] = extra.pop("description", f"{name} agent.")
    doc["provider"] = {"organization": provider, "url": "https://acme.example"}
    doc["capabilities"] = {"streaming": False}
    doc["supportedInterfaces"] = [
        {"url": url, "protocolBinding": binding, "protocolVersion": version}
    ]
    doc["skills"] = [
        {"id": sid, "name": sname, "description": sdesc, "tags": list(tags)}
        for sid, sname, sdesc, tags in skills
    ] or doc["skills"]
    doc.update(extra)
    return doc


@pytest.fixture
def population(alice):
    cards = [
        card(
            "Atlas Router",
            url="https://atlas.example/a2a",
            skills=[
                (
                    "route",
                    "Route planning",
                    "Plans truck routes across Europe.",
                    ["logistics", "maps"],
                )
            ],
            capabilities={"streaming": True},
        ),
        card(
            "Bard Writer",
            url="https://bard.example/a2a",
            provider="Muse Labs",
            skills=[("poem", "Poetry", "Writes sonnets and haiku.", ["writing", "nlp"])],
            securitySchemes={
                "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}
            },
            securityRequirements=[{"schemes": {"key": {"list": []}}}],
        ),
        card(
            "Cargo Tracker",
            url="https://cargo.example/a2a",
            binding="HTTP+JSON",
            skills=[
                (
                    "track",
                    "Shipment tracking",
                    "Tracks containers by number.",
                    ["logistics", "tracking"],
                )
            ],
            capabilities={"extensions": [{"uri": "https://ext.example/geo/v1"}]},
        ),
        card(
            "Dune Oracle",
            url="https://dune.example/a2a",
            version="0.3",
            description="Answers questions about deserts and route water supplies.",
            skills=[("ask", "Ask", "Answers questions.", ["qa"])],
        ),
    ]
    ids = {}
    for doc in cards:
        response = alice.post("/a2a/agents", {"card": doc}, format="json")
        assert response.status_code == 201, response.content
        ids[doc["name"]] = response.json()["id"]
    return ids


def names(response):
    assert response.status_code == 200, response.content
    return [a["name"] for a in response.json()["results"]]


def names_of_every_page(anon, response):
    """The names on this page and on every page its next links lead to, in order."""
    seen = names(response)
    while next_link := response.json()["next"]:
        response = anon.get(next_link)
        seen += names(response)
    return seen
