"""The A2A 1.0 release candidate's cards (the registry design note's example card): a
known dialect, accepted with a warning for each RC member, served as posted and found by
skill; a card missing a REQUIRED member of the final 1.0 is accepted only as that dialect."""

import copy

import pytest

from protocols.a2a.cards.validation import card_validate

RC_CARD = {
    "name": "Invoice Agent",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://invoices.example.com/a2a", "transport": "JSONRPC"},
        {"url": "https://invoices.example.com/rest", "transport": "HTTP+JSON"},
    ],
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "invoice-parse",
            "name": "Parse invoices",
            "description": "Reads an invoice.",
            "tags": ["finance", "invoices"],
        }
    ],
}


def test_an_rc_card_is_valid_with_a_warning_for_each_rc_member():
    report = card_validate(copy.deepcopy(RC_CARD))
    assert report.ok, report.errors
    assert report.spec_version == "1.0-rc"
    assert {w.path for w in report.warnings} == {
        "supportedInterfaces[0].transport",
        "supportedInterfaces[0].protocolVersion",
        "supportedInterfaces[1].transport",
        "supportedInterfaces[1].protocolVersion",
        "description",
    }
    bindings = [i["protocolBinding"] for i in report.index_view["supportedInterfaces"]]
    assert bindings == ["JSONRPC", "HTTP+JSON"]


def test_a_final_1_0_card_without_its_description_is_still_refused(make_card):
    card = make_card()
    del card["description"]
    report = card_validate(card)
    assert report.spec_version == "1.0"
    assert [(e.path, e.message) for e in report.errors] == [("description", "is required")]


def test_an_rc_card_missing_another_required_member_is_refused_by_its_own_names():
    card = copy.deepcopy(RC_CARD)
    del card["version"]
    card["supportedInterfaces"][0]["transport"] = 7
    report = card_validate(card)
    assert {e.path for e in report.errors} == {"version", "supportedInterfaces[0].transport"}


@pytest.mark.django_db
def test_an_rc_card_round_trips_and_is_found_by_skill_and_binding(alice, anon):
    response = alice.post("/a2a/agents", {"card": copy.deepcopy(RC_CARD)}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["card"]["specVersion"] == "1.0-rc"
    assert "supportedInterfaces[0].transport" in {w["path"] for w in body["card"]["warnings"]}

    assert anon.get(f"/a2a/agents/{body['id']}").json() == RC_CARD
    found = anon.get("/discover/agents", {"skill": "invoice-parse"}).json()["results"]
    assert [a["id"] for a in found] == [body["id"]]
    by_binding = anon.get("/discover/agents", {"protocolBinding": "HTTP+JSON"}).json()
    assert [a["id"] for a in by_binding["results"]] == [body["id"]]
