"""AAP v0.1 compliance checker's reports: camelCase cards judged like snake_case ones, other
AAP versions and plain A2A cards named, incomplete or odd documents reported rather than
raised, reports as JSON and text, the card summary, and the project's schemas."""

import json

import pytest
from jsonschema import Draft202012Validator

from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.documents import AAP_SKILL_IDS, aap_card_summary
from protocols.aap.checks.report import report_as_text
from tests.protocols.aap.checks.conftest import (
    MISSING_MANIFEST,
    SCHEMAS,
    broken_rules,
    load,
    params,
    results_of,
    to_camel_case,
)


def test_camel_case_card_passes_like_its_snake_case_original(public_card, public_manifest):
    card = to_camel_case(public_card)
    assert "supportedInterfaces" in card

    report = aap_check(card, public_manifest)

    assert report.compliant
    assert {r.status for r in report.results} == {"pass"}


def test_camel_case_card_problems_are_reported_in_camel_case_paths(public_card, public_manifest):
    card = to_camel_case(public_card)
    card["supportedInterfaces"][1]["protocolBinding"] = "GRPC"
    card["securitySchemes"] = {"bearer": {}}

    report = aap_check(card, public_manifest)

    assert results_of(report, "card.binding") == [("pass", "supportedInterfaces[0]")]
    assert "GRPC (supportedInterfaces[1])" in report_as_text(report)
    assert ("fail", "securityRequirements") in results_of(report, "card.auth")


def test_card_schema_findings_keep_the_cards_own_spelling(public_card, public_manifest):
    card = to_camel_case(public_card)
    card["supportedInterfaces"][0]["protocolVersion"] = 1
    card["supportedInterfaces"][1]["transportHint"] = "fast"

    report = aap_check(card, public_manifest)

    assert ("fail", "supportedInterfaces[0].protocolVersion") in results_of(report, "card.binding")
    assert ("fail", "supportedInterfaces[1].transportHint") in results_of(report, "card.binding")


def test_v1_1_card_is_reported_as_a_later_aap_version_not_a_broken_v01_card():
    report = aap_check(load("card-v1.1.json"))

    assert report.aap_version == "1.1"
    assert report.is_dealer_agent
    assert not report.compliant
    assert "v1.1" in report.verdict
    assert "v0.1" in report.verdict
    assert not any(r.status == "fail" for r in report.results)
    assert results_of(report, "card.extension") == [("skip", "capabilities.extensions[0].uri")]


@pytest.mark.parametrize(
    ("uri", "version"),
    [
        ("https://autoagentprotocol.org/extensions/a2a-automotive-retail/v0.2", "0.2"),
        ("https://autoagentprotocol.org/extensions/a2a-automotive-retail/v1.0", "1.0"),
        ("https://autoagentprotocol.org/extensions/aap/v1.1", "1.1"),
    ],
)
def test_other_aap_extension_uris_report_their_version(public_card, uri, version):
    public_card["capabilities"]["extensions"][0]["uri"] = uri

    report = aap_check(public_card)

    assert report.aap_version == version
    assert report.verdict == f"Declares AAP v{version}; this checker covers AAP v0.1 only"


def test_plain_a2a_card_is_reported_as_a_generic_agent(make_card, public_manifest):
    report = aap_check(make_card(), public_manifest)

    assert report.verdict == "A generic A2A agent, not an AAP dealer agent"
    assert not report.is_dealer_agent
    assert not report.compliant
    assert report.aap_version is None
    assert results_of(report, "card.a2a") == [("pass", "(card)")]
    assert results_of(report, "card.extension") == [("fail", "capabilities.extensions")]
    later = [r.status for r in report.results if r.rule not in {"card.a2a", "card.extension"}]
    assert set(later) == {"skip"}


def test_legacy_0_1_0_manifest_is_reported_as_legacy(bearer_card):
    report = aap_check(bearer_card, load("manifest-0.1.0-legacy.json"))

    assert not report.compliant
    assert "legacy 0.1.0" in report.verdict
    legacy = [r for r in report.results if r.path == "contract.version"]
    assert legacy[0].rule == "manifest.schema"
    assert "legacy 0.1.0" in legacy[0].message
    assert ("fail", "a2a.skills[4].id") in results_of(report, "manifest.schema")


def test_card_alone_passes_its_rules_but_is_incomplete_so_not_compliant(public_card):
    report = aap_check(public_card)

    assert not report.compliant
    assert not report.complete
    assert report.failed_rules() == []
    assert report.skipped_rules() == [
        "manifest.schema",
        "manifest.auth_type",
        "manifest.skills",
        "manifest.endpoint",
    ]
    assert report.verdict == MISSING_MANIFEST
    skipped = [r for r in report.results if r.rule.startswith("manifest.")]
    assert {r.status for r in skipped} == {"skip"}
    assert all("not supplied" in r.message for r in skipped)


@pytest.mark.parametrize("card", [None, [], "card", 42])
def test_card_that_is_not_an_object_gets_a_failing_report(card, public_manifest):
    report = aap_check(card, public_manifest)

    assert not report.compliant
    assert not report.is_dealer_agent
    assert results_of(report, "card.a2a") == [("fail", "(card)")]


@pytest.mark.parametrize("manifest", [[], "manifest", 0, True])
def test_manifest_that_is_not_an_object_fails_manifest_schema(public_card, manifest):
    report = aap_check(public_card, manifest)

    assert not report.compliant
    assert results_of(report, "manifest.schema") == [("fail", "(manifest)")]
    assert results_of(report, "manifest.skills") == [("skip", "(manifest)")]


def test_odd_member_types_give_a_report_not_an_exception(public_card, public_manifest):
    public_card["capabilities"]["extensions"][0]["params"] = ["manifest_url"]
    public_card["skills"].append({"id": ["lead.submit"], "name": 1})
    public_card["security_requirements"] = "bearer"
    public_manifest["a2a"]["skills"][0]["id"] = {"id": "dealer.information"}

    report = aap_check(public_card, public_manifest)

    assert not report.compliant
    assert {"card.skills", "card.auth", "manifest.schema"} <= broken_rules(report)


def test_report_serializes_to_json_with_camel_case_keys(bearer_card, bearer_manifest):
    bearer_manifest["auth_type"] = None

    document = json.loads(json.dumps(aap_check(bearer_card, bearer_manifest).as_dict()))

    assert set(document) == {
        "compliant",
        "complete",
        "aapVersion",
        "verdict",
        "isDealerAgent",
        "implementedSkills",
        "results",
    }
    assert document["compliant"] is False
    assert {
        "rule": "manifest.auth_type",
        "level": "MUST",
        "status": "fail",
        "path": "auth_type",
    }.items() <= next(r for r in document["results"] if r["rule"] == "manifest.auth_type").items()


def test_report_text_marks_each_result_and_ends_with_the_verdict(public_card):
    params(public_card)["manifest_url"] = "/.well-known/auto-agent-contract.json"
    public_card["supported_interfaces"][1]["transport_hint"] = "fast"

    text = report_as_text(aap_check(public_card))

    lines = text.splitlines()
    assert lines[0].startswith("✔ card.a2a")
    assert any(line.startswith("✘ card.binding") and "MUST" in line for line in lines)
    assert any(line.startswith("! card.manifest_url") and "SHOULD" in line for line in lines)
    assert any(line.startswith("\u2013 manifest.schema") for line in lines)
    assert lines[-1] == "Verdict: Not compliant: 1 MUST rule fails"


def test_card_summary_matches_the_full_report(public_card, make_card):
    assert aap_card_summary(public_card) == {
        "isDealerAgent": True,
        "aapVersion": "0.1",
        "implementedSkills": list(AAP_SKILL_IDS),
    }
    assert aap_card_summary(load("card-v1.1.json"))["aapVersion"] == "1.1"
    generic = {"isDealerAgent": False, "aapVersion": None, "implementedSkills": []}
    assert aap_card_summary(make_card()) == generic
    assert aap_card_summary("not a card") == generic


@pytest.mark.parametrize("name", ["agent-card.schema.json", "contract-manifest.schema.json"])
def test_project_schemas_are_valid_2020_12_schemas(name):
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))

    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
