"""What changed between card versions (JSON Patch and the breaking rules), the
``compatibility: backward`` rule with its 409 and ``?dryRun=true``, and the lifecycle as
a card consumer sees it (Deprecation, Sunset and successor Link headers; 410 once retired)."""

import copy
import json

import pytest

from protocols.a2a.models import CardVersion
from protocols.a2a.versions.diff import card_summary
from registry.fastpath.lean import LeanApplication
from tests.conftest import BASE_CARD
from tests.registry.fastpath.test_lean import Recorder, call

pytestmark = pytest.mark.django_db


def card(**overrides) -> dict:
    made = copy.deepcopy(BASE_CARD)
    made.update(overrides)
    return made


def skill(skill_id: str, **overrides) -> dict:
    return {
        "id": skill_id,
        "name": skill_id.title(),
        "description": f"The {skill_id} skill.",
        "tags": [skill_id],
        **overrides,
    }


def rules(summary: dict) -> list[tuple[str, bool]]:
    return sorted((c["rule"], c["breaking"]) for c in summary["changes"])


def test_removing_a_skill_breaks_and_adding_one_does_not():
    old = card(skills=[skill("forecast"), skill("alerts")])
    new = card(skills=[skill("forecast"), skill("radar")], version="1.1.0")
    summary = card_summary(old, new)
    assert rules(summary) == [
        ("skill-added", False),
        ("skill-removed", True),
        ("version-changed", False),
    ]
    assert summary["breaking"] and not summary["majorVersionUp"]


def test_interfaces_moved_rebound_added_and_removed():
    jsonrpc = {
        "url": "https://a.example.com/rpc",
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }
    rest = {
        "url": "https://a.example.com/rest",
        "protocolBinding": "HTTP+JSON",
        "protocolVersion": "1.0",
    }
    moved = {**jsonrpc, "url": "https://b.example.com/rpc"}
    grpc = {
        "url": "https://a.example.com/grpc",
        "protocolBinding": "GRPC",
        "protocolVersion": "1.0",
    }
    summary = card_summary(
        card(supportedInterfaces=[jsonrpc, rest]), card(supportedInterfaces=[moved, grpc])
    )
    assert rules(summary) == [
        ("interface-added", False),
        ("interface-removed", True),
        ("interface-url-changed", True),
    ]
    rebound = {**rest, "protocolBinding": "GRPC"}
    summary = card_summary(card(supportedInterfaces=[rest]), card(supportedInterfaces=[rebound]))
    assert rules(summary) == [("interface-binding-changed", True)]
    summary = card_summary(
        card(supportedInterfaces=[jsonrpc]), card(supportedInterfaces=[jsonrpc, rest])
    )
    assert rules(summary) == [("interface-added", False)]
    summary = card_summary(
        card(supportedInterfaces=[jsonrpc, rest]), card(supportedInterfaces=[jsonrpc])
    )
    assert rules(summary) == [("interface-removed", True)]


def test_security_modes_and_extensions_follow_their_rules():
    schemes = {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}}
    secured = card(
        securitySchemes=schemes, securityRequirements=[{"schemes": {"key": {"list": []}}}]
    )
    assert rules(card_summary(card(securitySchemes=schemes), secured)) == [("security-added", True)]
    assert rules(card_summary(secured, card(securitySchemes=schemes))) == [
        ("security-removed", False)
    ]
    narrowed = card(defaultOutputModes=["application/json"])
    assert rules(card_summary(card(), narrowed)) == [("modes-narrowed", True)]
    assert rules(card_summary(narrowed, card())) == [("modes-widened", False)]
    optional = {"uri": "https://ext.example.com/a", "required": False}
    required = {"uri": "https://ext.example.com/b", "required": True}
    base = card(capabilities={"streaming": True})
    with_ext = card(capabilities={"streaming": True, "extensions": [optional, required]})
    assert rules(card_summary(base, with_ext)) == [
        ("extension-added", False),
        ("required-extension-added", True),
    ]
    assert rules(card_summary(with_ext, card(capabilities={}))) == [
        ("capability-withdrawn", True),
        ("extension-removed", True),
        ("extension-removed", True),
    ]


def test_a_skills_own_changes_follow_their_rules():
    schemes = {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}}
    before = card(
        securitySchemes=schemes,
        skills=[skill("forecast", inputModes=["text/plain", "application/json"])],
    )
    reworded = card(
        securitySchemes=schemes,
        skills=[
            skill(
                "forecast",
                description="Forecasts, reworded.",
                tags=["weather"],
                inputModes=["text/plain", "application/json"],
            )
        ],
    )
    assert rules(card_summary(before, reworded)) == [("skill-described", False)]
    narrowed = card(
        securitySchemes=schemes, skills=[skill("forecast", inputModes=["application/json"])]
    )
    assert rules(card_summary(before, narrowed)) == [("skill-modes-narrowed", True)]
    assert rules(card_summary(narrowed, before)) == [("skill-modes-widened", False)]
    secured = card(
        securitySchemes=schemes,
        skills=[
            skill(
                "forecast",
                inputModes=["text/plain", "application/json"],
                securityRequirements=[{"schemes": {"key": {"list": []}}}],
            )
        ],
    )
    summary = card_summary(before, secured)
    assert rules(summary) == [("skill-security-added", True)] and summary["breaking"]
    assert summary["changes"][0]["path"] == "skills[forecast].securityRequirements"


def test_an_interfaces_protocol_version_and_a_new_capability_follow_their_rules():
    iface = {"url": "https://a.example.com/rpc", "protocolBinding": "JSONRPC"}
    old = card(supportedInterfaces=[{**iface, "protocolVersion": "0.3"}])
    new = card(supportedInterfaces=[{**iface, "protocolVersion": "1.0"}])
    summary = card_summary(old, new)
    assert rules(summary) == [("interface-version-changed", True)]
    assert summary["changes"][0]["detail"] == "0.3 -> 1.0"
    pushed = card(capabilities={"pushNotifications": True})
    summary = card_summary(card(capabilities={}), pushed)
    assert rules(summary) == [("capability-added", False)] and not summary["breaking"]


def test_the_diff_endpoint_gives_a_json_patch_and_the_summary(alice, anon):
    agent_id = alice.post("/a2a/agents", {"card": card(version="1.0.0")}, format="json").json()[
        "id"
    ]
    new = card(version="1.1.0", skills=[skill("forecast"), skill("radar")])
    new["skills"][0] = BASE_CARD["skills"][0]
    assert alice.put(f"/a2a/agents/{agent_id}", {"card": new}, format="json").status_code == 200
    diff = anon.get(f"/agents/{agent_id}/versions/1/diff/2").json()
    assert (diff["from"], diff["to"], diff["breaking"]) == (1, 2, False)
    assert {"op": "replace", "path": "/version", "value": "1.1.0"} in diff["patch"]
    assert any(op["op"] == "add" and op["path"].startswith("/skills/") for op in diff["patch"])
    assert rules(diff) == [("skill-added", False), ("version-changed", False)]
    back = anon.get(f"/agents/{agent_id}/versions/2/diff/1").json()
    assert back["breaking"] and ("skill-removed", True) in rules(back)
    stored = anon.get(f"/agents/{agent_id}/versions/2").json()
    assert stored["summary"]["changes"] == diff["changes"] and not stored["breaking"]


def test_backward_compatibility_refuses_a_break_unless_the_major_version_goes_up(alice, anon):
    first = card(version="1.0.0", skills=[skill("forecast"), skill("alerts")])
    agent_id = alice.post("/a2a/agents", {"card": first}, format="json").json()["id"]
    url = f"/a2a/agents/{agent_id}"
    alice.patch(f"/agents/{agent_id}", {"compatibility": "backward"}, format="json")
    broken = card(version="1.1.0", skills=[skill("forecast")])

    refused = alice.put(url, {"card": broken}, format="json")
    assert refused.status_code == 409 and refused.json()["type"].endswith("/breaking-change")
    assert [e["path"] for e in refused.json()["errors"]] == ["skills[alerts]"]
    assert json.loads(anon.get(url).content)["version"] == "1.0.0"  # nothing changed
    assert CardVersion.objects.filter(agent_id=agent_id).count() == 1

    fine = card(version="1.1.0", skills=[skill("forecast"), skill("alerts"), skill("radar")])
    assert alice.put(url, {"card": fine}, format="json").status_code == 200
    major = card(version="2.0.0", skills=[skill("forecast")])
    assert alice.put(url, {"card": major}, format="json").status_code == 200
    assert json.loads(anon.get(url).content)["version"] == "2.0.0"
    alice.patch(f"/agents/{agent_id}", {"compatibility": "none"}, format="json")
    assert (
        alice.put(
            url, {"card": card(version="2.1.0", skills=[skill("other")])}, format="json"
        ).status_code
        == 200
    )


def test_dry_run_answers_the_would_be_version_and_stores_nothing(alice, anon):
    agent_id = alice.post("/a2a/agents", {"card": card(version="1.0.0")}, format="json").json()[
        "id"
    ]
    url = f"/a2a/agents/{agent_id}"
    served = anon.get(url).content
    trial = alice.put(
        f"{url}?dryRun=true",
        {"card": card(version="1.1.0", skills=[skill("other")])},
        format="json",
    )
    assert trial.status_code == 200, trial.content
    body = trial.json()
    assert (body["dryRun"], body["changed"], body["seq"], body["version"]) == (
        True,
        True,
        2,
        "1.1.0",
    )
    assert body["breaking"] and ("skill-removed", True) in rules(body["summary"])
    assert anon.get(url).content == served
    assert CardVersion.objects.filter(agent_id=agent_id).count() == 1
    same = alice.put(f"{url}?dryRun=true", {"card": card(version="1.0.0")}, format="json").json()
    assert (same["changed"], same["seq"]) == (False, 1)
    bad = alice.put(f"{url}?dryRun=yes", {"card": card()}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "dryRun"
    alice.patch(f"/agents/{agent_id}", {"compatibility": "backward"}, format="json")
    refused = alice.put(
        f"{url}?dryRun=true",
        {"card": card(version="1.0.1", skills=[skill("other")])},
        format="json",
    )
    assert refused.status_code == 409


def test_a_deprecated_agents_card_carries_deprecation_sunset_and_successor(alice, anon):
    old = alice.post("/a2a/agents", {"card": card()}, format="json").json()["id"]
    interfaces = [
        {
            "url": "https://new.example.com/a2a",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }
    ]
    new = alice.post(
        "/a2a/agents", {"card": card(supportedInterfaces=interfaces)}, format="json"
    ).json()["id"]
    body = {"reason": "Use the new one.", "successor": new, "sunsetAt": "2030-01-31T00:00:00Z"}
    assert alice.post(f"/agents/{old}/deprecate", body, format="json").status_code == 200

    path = f"/a2a/agents/{old}"
    view = anon.get(path, HTTP_X_REQUEST_ID="same-id")
    assert view["Deprecation"].startswith("@") and int(view["Deprecation"][1:]) > 0
    assert view["Sunset"] == "Thu, 31 Jan 2030 00:00:00 GMT"
    assert view["Link"] == f'<http://testserver/a2a/agents/{new}>; rel="successor-version"'
    status, headers, lean_body = call(
        LeanApplication(Recorder()), "GET", path, HTTP_X_REQUEST_ID="same-id"
    )
    assert (status, lean_body) == (200, view.content)
    assert headers == dict(view.headers.items())

    assert alice.post(f"/agents/{old}/undeprecate").status_code == 200
    again = anon.get(path)
    assert "Deprecation" not in again and "Link" not in again


def test_a_retired_agents_card_is_gone_and_its_versions_stay(alice, anon):
    agent_id = alice.post("/a2a/agents", {"card": card(version="1")}, format="json").json()["id"]
    alice.put(f"/a2a/agents/{agent_id}", {"card": card(version="2")}, format="json")
    assert alice.delete(f"/agents/{agent_id}").status_code == 204
    gone = anon.get(f"/a2a/agents/{agent_id}")
    assert gone.status_code == 410 and gone["Content-Type"] == "application/problem+json"
    assert gone.json()["retiredAt"].endswith("Z")
    django = Recorder()
    status, _, _ = call(LeanApplication(django), "GET", f"/a2a/agents/{agent_id}")
    assert (status, django.paths) == (410, [f"/a2a/agents/{agent_id}"])  # the view's answer
    assert json.loads(anon.get(f"/a2a/agents/{agent_id}?version=1").content)["version"] == "1"
    assert [v["seq"] for v in anon.get(f"/agents/{agent_id}/versions").json()["items"]] == [2, 1]
    refused = alice.put(f"/a2a/agents/{agent_id}", {"card": card(version="3")}, format="json")
    assert refused.status_code == 409
    again = alice.post("/a2a/agents", {"card": card(version="3")}, format="json")
    assert again.status_code == 201 and again.json()["id"] != agent_id  # a new agent


def test_deprecating_and_undeprecating_change_the_cards_etag(alice, anon):
    agent_id = alice.post("/a2a/agents", {"card": card()}, format="json").json()["id"]
    path = f"/a2a/agents/{agent_id}"
    lane = LeanApplication(Recorder())

    def etag_and_status(tag: str) -> tuple[str, int, int]:
        view = anon.get(path, HTTP_IF_NONE_MATCH=tag)
        status, headers, _ = call(lane, "GET", path, HTTP_IF_NONE_MATCH=tag)
        assert headers["ETag"] == view["ETag"]
        return view["ETag"], view.status_code, status

    active = anon.get(path)["ETag"]
    assert etag_and_status(active) == (active, 304, 304)

    body = {"reason": "Use the new one.", "sunsetAt": "2030-01-31T00:00:00Z"}
    assert alice.post(f"/agents/{agent_id}/deprecate", body, format="json").status_code == 200
    deprecated, view_status, lane_status = etag_and_status(active)
    assert deprecated != active and (view_status, lane_status) == (200, 200)
    assert CardVersion.objects.filter(agent_id=agent_id).count() == 1  # the card is the same
    assert anon.get(path, HTTP_IF_NONE_MATCH=active)["Sunset"] == "Thu, 31 Jan 2030 00:00:00 GMT"
    assert etag_and_status(deprecated) == (deprecated, 304, 304)

    body["sunsetAt"] = "2031-01-31T00:00:00Z"  # other headers, the same card: another tag
    assert alice.post(f"/agents/{agent_id}/deprecate", body, format="json").status_code == 200
    later, view_status, _ = etag_and_status(deprecated)
    assert later not in (active, deprecated) and view_status == 200

    # The card's ETag as served is the one a card write's If-Match takes.
    stale = alice.put(path, {"card": card()}, format="json", HTTP_IF_MATCH=deprecated)
    assert stale.status_code == 412
    again = alice.put(path, {"card": card(version="1.0.1")}, format="json", HTTP_IF_MATCH=later)
    assert again.status_code == 200, again.content

    replaced = anon.get(path)["ETag"]
    assert alice.post(f"/agents/{agent_id}/undeprecate").status_code == 200
    undeprecated, view_status, lane_status = etag_and_status(replaced)
    assert undeprecated != replaced and (view_status, lane_status) == (200, 200)
    assert "Deprecation" not in anon.get(path)
