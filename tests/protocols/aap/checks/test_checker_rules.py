"""AAP v0.1 compliance checker's rules: official examples pass; each card rule and each
manifest rule breaks on its own."""

import copy

import pytest

from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.documents import AAP_SKILL_IDS, AAP_V01_EXTENSION_URI
from protocols.aap.checks.report import RULES
from tests.protocols.aap.checks.conftest import (
    assert_only_broken,
    broken_rules,
    params,
    results_of,
)


def test_official_public_card_and_manifest_pass_every_rule(public_card, public_manifest):
    report = aap_check(public_card, public_manifest)

    assert report.compliant
    assert report.verdict == "AAP v0.1 compliant"
    assert report.aap_version == "0.1"
    assert report.is_dealer_agent
    assert report.implemented_skills == list(AAP_SKILL_IDS)
    assert [r.rule for r in report.results] == list(RULES)
    assert {r.status for r in report.results} == {"pass"}


def test_official_bearer_card_and_manifest_pass_every_rule(bearer_card, bearer_manifest):
    report = aap_check(bearer_card, bearer_manifest)

    assert report.compliant
    assert {r.status for r in report.results} == {"pass"}
    assert "bearer" in next(r.message for r in report.results if r.rule == "card.auth")


def test_card_that_is_not_valid_a2a_fails_card_a2a_at_the_first_error_path(
    public_card, public_manifest
):
    del public_card["name"]

    report = aap_check(public_card, public_manifest)

    assert not report.compliant
    assert results_of(report, "card.a2a")[0] == ("fail", "name")
    assert_only_broken(report, "card.a2a", "fail", "name")
    assert report.verdict == "Not compliant: 1 MUST rule fails"


def test_near_miss_extension_uri_fails_card_extension_but_is_still_judged_as_v01(
    public_card, public_manifest
):
    public_card["capabilities"]["extensions"][0]["uri"] = AAP_V01_EXTENSION_URI + "/"

    report = aap_check(public_card, public_manifest)

    assert_only_broken(report, "card.extension", "fail", "capabilities.extensions[0].uri")
    assert report.is_dealer_agent
    assert report.aap_version == "0.1"
    assert not report.compliant


def test_plain_http_manifest_url_is_a_should_warning_that_keeps_the_card_compliant(
    public_card, public_manifest
):
    params(public_card)["manifest_url"] = "http://demo-toyota.example.com/contract.json"

    report = aap_check(public_card, public_manifest)

    path = "capabilities.extensions[0].params.manifest_url"
    assert_only_broken(report, "card.manifest_url", "warn", path)
    assert report.compliant
    assert report.verdict == "AAP v0.1 compliant, with 1 SHOULD warning"


def test_missing_manifest_url_is_a_should_warning(public_card, public_manifest):
    del params(public_card)["manifest_url"]

    report = aap_check(public_card, public_manifest)

    path = "capabilities.extensions[0].params.manifest_url"
    assert_only_broken(report, "card.manifest_url", "warn", path)


def test_aap_skill_ids_short_of_the_five_ids_is_a_should_warning(public_card, public_manifest):
    params(public_card)["aap_skill_ids"].remove("inventory.facets")

    report = aap_check(public_card, public_manifest)

    path = "capabilities.extensions[0].params.aap_skill_ids"
    assert_only_broken(report, "card.skill_vocabulary", "warn", path)
    assert report.compliant


def test_implemented_skills_outside_the_vocabulary_is_a_should_warning(
    public_card, public_manifest
):
    params(public_card)["implemented_skills"].append("lead.general")

    report = aap_check(public_card, public_manifest)

    path = "capabilities.extensions[0].params.implemented_skills[5]"
    assert_only_broken(report, "card.skill_vocabulary", "warn", path)


def test_implemented_skills_naming_a_skill_the_card_lacks_fails_card_skills(
    public_card, public_manifest
):
    public_card["skills"] = [s for s in public_card["skills"] if s["id"] != "lead.submit"]
    public_manifest["a2a"]["skills"] = [
        s for s in public_manifest["a2a"]["skills"] if s["id"] != "lead.submit"
    ]

    report = aap_check(public_card, public_manifest)

    path = "capabilities.extensions[0].params.implemented_skills"
    assert_only_broken(report, "card.skills", "fail", path)
    message = next(r.message for r in report.results if r.rule == "card.skills")
    assert "lead.submit" in message


def test_duplicate_skill_id_fails_card_skills_at_the_second_entry(public_card, public_manifest):
    public_card["skills"].append(copy.deepcopy(public_card["skills"][0]))

    report = aap_check(public_card, public_manifest)

    assert ("fail", "skills[5].id") in results_of(report, "card.skills")


def test_card_without_any_aap_skill_fails_card_skills(public_card):
    for skill in public_card["skills"]:
        skill["id"] = "custom." + skill["id"]
    del params(public_card)["implemented_skills"]

    report = aap_check(public_card)

    assert ("fail", "skills") in results_of(report, "card.skills")
    assert report.implemented_skills == []


def test_grpc_interface_beside_a_jsonrpc_one_passes_card_binding_and_is_named(
    public_card, public_manifest
):
    public_card["supported_interfaces"][1]["protocol_binding"] = "GRPC"

    report = aap_check(public_card, public_manifest)

    assert report.compliant
    assert broken_rules(report) == set()
    [result] = [r for r in report.results if r.rule == "card.binding"]
    assert (result.status, result.path) == ("pass", "supported_interfaces[0]")
    assert "GRPC (supported_interfaces[1])" in result.message


def test_interface_with_an_a2a_tenant_passes_card_binding(public_card, public_manifest):
    public_card["supported_interfaces"][0]["tenant"] = "demo-toyota"

    report = aap_check(public_card, public_manifest)

    assert report.compliant
    assert results_of(report, "card.binding") == [("pass", "supported_interfaces[0]")]


def test_card_with_no_jsonrpc_or_http_json_interface_fails_card_binding(public_card):
    for interface in public_card["supported_interfaces"]:
        interface["protocol_binding"] = "GRPC"

    report = aap_check(public_card)

    assert results_of(report, "card.binding") == [("fail", "supported_interfaces")]
    message = next(r.message for r in report.results if r.rule == "card.binding")
    assert "lists only GRPC (supported_interfaces[0]), GRPC (supported_interfaces[1])" in message


def test_bearer_scheme_without_a_requirement_fails_card_auth(public_card, public_manifest):
    bearer = {"http_auth_security_scheme": {"scheme": "Bearer"}}
    public_card["security_schemes"] = {"bearer": bearer}

    report = aap_check(public_card, public_manifest)

    assert_only_broken(report, "card.auth", "fail", "security_requirements")
    assert results_of(report, "manifest.auth_type") == [("skip", "auth_type")]


def test_bearer_requirement_without_a_scheme_fails_card_auth(bearer_card, bearer_manifest):
    del bearer_card["security_schemes"]

    report = aap_check(bearer_card, bearer_manifest)

    assert ("fail", "security_schemes") in results_of(report, "card.auth")


def test_scheme_other_than_bearer_fails_card_auth(bearer_card, bearer_manifest):
    bearer_card["security_schemes"]["oauth"] = {"oauth2_security_scheme": {}}
    bearer_card["security_requirements"].append({"oauth": []})

    report = aap_check(bearer_card, bearer_manifest)

    assert ("fail", "security_schemes.oauth") in results_of(report, "card.auth")
    assert ("fail", "security_requirements[1].oauth") in results_of(report, "card.auth")


def test_bearer_requirement_in_a2a_1_0_form_is_accepted(bearer_card, bearer_manifest):
    bearer_card["security_requirements"] = [{"schemes": {"bearer": {"list": []}}}]

    report = aap_check(bearer_card, bearer_manifest)

    assert results_of(report, "card.auth") == [("pass", "security_requirements")]
    assert results_of(report, "manifest.auth_type") == [("pass", "auth_type")]


def test_manifest_missing_a_required_member_fails_manifest_schema_at_its_path(
    bearer_card, bearer_manifest
):
    del bearer_manifest["dealer"]["name"]

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.schema", "fail", "dealer.name")


def test_manifest_schema_reports_every_violation_sorted_by_path(bearer_card, bearer_manifest):
    del bearer_manifest["contract"]["uri"]
    bearer_manifest["llm"]["guide_url"] = "guide.md"
    bearer_manifest["extra"] = 1
    bearer_manifest["a2a"]["skills"][0]["anonymous_allowed"] = "yes"

    report = aap_check(bearer_card, bearer_manifest)

    assert results_of(report, "manifest.schema") == [
        ("fail", "a2a.skills[0].anonymous_allowed"),
        ("fail", "contract.uri"),
        ("fail", "extra"),
        ("fail", "llm.guide_url"),
    ]


@pytest.mark.parametrize(
    ("guide_url", "accepted"),
    [
        ("https://demo.example.com/guide.md", True),
        ("urn:example:guide", True),
        ("guide.md", False),
        ("https:///guide.md", False),
        ("https://demo.example.com/a guide.md", False),
        ("https://demo.example.com/%zz", False),
    ],
)
def test_manifest_uri_format_is_asserted(bearer_card, bearer_manifest, guide_url, accepted):
    bearer_manifest["llm"]["guide_url"] = guide_url

    report = aap_check(bearer_card, bearer_manifest)

    expected = [("pass", "(manifest)")] if accepted else [("fail", "llm.guide_url")]
    assert results_of(report, "manifest.schema") == expected


def test_lead_submit_declared_anonymous_fails_manifest_schema(bearer_card, bearer_manifest):
    bearer_manifest["a2a"]["skills"][4]["anonymous_allowed"] = True

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.schema", "fail", "a2a.skills[4].anonymous_allowed")


def test_manifest_auth_type_contradicting_the_bearer_card_fails(bearer_card, bearer_manifest):
    bearer_manifest["auth_type"] = None

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.auth_type", "fail", "auth_type")


def test_manifest_auth_type_contradicting_the_public_card_fails(public_card, public_manifest):
    public_manifest["auth_type"] = "bearer"

    report = aap_check(public_card, public_manifest)

    assert_only_broken(report, "manifest.auth_type", "fail", "auth_type")


def test_manifest_omitting_an_implemented_skill_fails_manifest_skills(bearer_card, bearer_manifest):
    bearer_manifest["a2a"]["skills"].pop(1)

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.skills", "fail", "a2a.skills")
    message = next(r.message for r in report.results if r.rule == "manifest.skills")
    assert "inventory.facets" in message


def test_manifest_skill_the_card_does_not_implement_fails_manifest_skills(
    public_card, public_manifest
):
    public_card["skills"] = [s for s in public_card["skills"] if s["id"] != "inventory.facets"]
    params(public_card)["implemented_skills"].remove("inventory.facets")

    report = aap_check(public_card, public_manifest)

    assert_only_broken(report, "manifest.skills", "fail", "a2a.skills[1].id")


def test_manifest_endpoint_missing_from_the_card_fails_manifest_endpoint(
    bearer_card, bearer_manifest
):
    bearer_manifest["a2a"]["endpoint"] = "https://demo-toyota.agents.lumika.ai/elsewhere"

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.endpoint", "fail", "a2a.endpoint")


def test_manifest_endpoint_with_the_wrong_binding_fails_manifest_endpoint(
    bearer_card, bearer_manifest
):
    bearer_manifest["a2a"]["protocol_binding"] = "HTTP+JSON"

    report = aap_check(bearer_card, bearer_manifest)

    assert_only_broken(report, "manifest.endpoint", "fail", "a2a.endpoint")
