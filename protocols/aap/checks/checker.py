"""Auto Agent Protocol v0.1 compliance of an agent card and, optionally, its contract manifest.

``aap_check`` is pure (no network, no database) and judges the raw decoded documents,
never an a2a-sdk view of them: the SDK turns the published bearer declaration into
an empty requirement. Every finding is a ``RuleResult`` under one of the ids in
``RULES``; a rule that holds gets one 'pass' result, a broken MUST rule one 'fail'
per problem, a broken SHOULD rule one 'warn' per problem.

Choices:

- The rule set is picked by the exact v0.1 extension URI. A near miss (other case,
  http, trailing slash) is a v0.1 card that fails ``card.extension``. A later AAP URI
  (``…/v0.2``, ``…/v1.0``, ``…/aap/v1.1``) reports that version, skips every rule and
  says this checker covers v0.1 only. No AAP URI at all: a generic A2A agent,
  ``card.extension`` fails and the rules after it are skipped.
- Checks made elsewhere (``protocols.aap.statuses.services`` fetching a domain's documents gives
  ``card.fetch`` and ``manifest.fetch``) join a report through ``report_with_results``.
- ``manifest=None`` means the manifest was not supplied: the four manifest MUST rules are
  'skip', so the report is not ``complete`` and not ``compliant`` (compliance needs every
  MUST rule checked and passing); the verdict says the manifest is missing and whether
  the card rules pass. ``compliant`` also needs a v0.1 extension declaration.
- Paths are JSON-path-like, in each document's own member names (``skills[2].id``,
  ``supportedInterfaces[0]`` in a camelCase card, ``a2a.skills[5].id`` in a
  manifest). The rule id's prefix (``card.`` / ``manifest.``) names the document; a
  document's root is ``(card)`` or ``(manifest)``.
- Shape is judged by the project's schemas in ``aap/schemas/``; card schema findings
  are filed under the rule that owns their path (interfaces under ``card.binding``,
  skills under ``card.skills``, …). ``card.binding`` needs one interface whose binding
  is JSONRPC or HTTP+JSON; other bindings (gRPC) may be listed beside it and are named
  in the pass message, not failed. Interface entries may carry A2A's ``tenant``.
  The manifest schema also pins what v0.1 fixes beyond the published schema: contract
  version 0.1.1 and URI, each skill's schema URLs, lead.submit's anonymity and consent.
"""

from typing import Any

from protocols.a2a.cards.validation import card_validate
from protocols.aap.checks.card_rules import CardChecks, merge, outcome, skipped
from protocols.aap.checks.documents import AAP_V01_EXTENSION_URI, Card, declaration_of, skill_ids
from protocols.aap.checks.manifest_rules import (
    manifest_auth_rule,
    manifest_endpoint_rule,
    manifest_schema_rule,
    manifest_skills_rule,
)
from protocols.aap.checks.report import (
    CARD_ROOT,
    FAIL,
    MANIFEST_ROOT,
    MUST,
    AAPReport,
    RuleResult,
    plural,
)
from registry.http.jsonutil import Problem

_CARD_RULES_AFTER_EXTENSION = (
    "card.manifest_url",
    "card.skill_vocabulary",
    "card.skills",
    "card.binding",
    "card.auth",
)


_MANIFEST_RULES = ("manifest.schema", "manifest.auth_type", "manifest.skills", "manifest.endpoint")


def aap_check(card: Any, manifest: Any | None = None) -> AAPReport:
    """Check a decoded card, and its decoded contract manifest if given, against AAP v0.1."""
    if not isinstance(card, dict):
        results = [RuleResult("card.a2a", MUST, FAIL, CARD_ROOT, "the card must be a JSON object")]
        reason = "not checked: the card is not a JSON object"
        results += skipped(["card.extension", *_CARD_RULES_AFTER_EXTENSION], CARD_ROOT, reason)
        results += skipped(_MANIFEST_RULES, MANIFEST_ROOT, reason)
        return AAPReport(
            False, None, "Not compliant: the card is not a JSON object", False, [], results
        )

    view = Card(card)
    a2a_report = card_validate(card)
    declaration = declaration_of(view)
    a2a_problems = list(a2a_report.errors)

    if declaration.kind in {"none", "other"}:
        results = outcome(
            "card.a2a",
            a2a_problems,
            Problem(CARD_ROOT, f"a valid A2A {a2a_report.spec_version} card"),
        )
        if declaration.kind == "none":
            extensions_path = f"{view.key(card, 'capabilities')}.extensions"
            results.append(
                RuleResult(
                    "card.extension",
                    MUST,
                    FAIL,
                    extensions_path,
                    f"has no AAP extension ({AAP_V01_EXTENSION_URI})",
                )
            )
            reason = "not an AAP dealer agent"
            verdict = (
                "A generic A2A agent, not an AAP dealer agent"
                if a2a_report.ok
                else "Not an AAP dealer agent, and not a valid A2A card"
            )
        else:
            reason = f"declares AAP v{declaration.version}; this checker covers v0.1 only"
            results += skipped(
                ["card.extension"],
                f"capabilities.extensions[{declaration.index}].uri",
                f"{declaration.uri} is the AAP v{declaration.version} extension; "
                "this checker covers v0.1 only",
            )
            verdict = f"Declares AAP v{declaration.version}; this checker covers AAP v0.1 only"
        results += skipped(_CARD_RULES_AFTER_EXTENSION, CARD_ROOT, f"not checked: {reason}")
        results += skipped(_MANIFEST_RULES, MANIFEST_ROOT, f"not checked: {reason}")
        return AAPReport(
            compliant=False,
            aap_version=declaration.version,
            verdict=verdict,
            is_dealer_agent=declaration.kind == "other",
            implemented_skills=skill_ids(view) if declaration.kind == "other" else [],
            results=results,
        )

    checks = CardChecks(view, declaration)
    results = outcome(
        "card.a2a",
        merge(a2a_problems, checks.found("card.a2a")),
        Problem(CARD_ROOT, f"a valid A2A {a2a_report.spec_version} card"),
    )
    results += checks.extension_rule()
    results += checks.manifest_url_rule()
    results += checks.vocabulary_rule()
    results += checks.skills_rule()
    results += checks.binding_rule()
    results += checks.auth_rule()

    legacy = False
    if manifest is None:
        results += skipped(_MANIFEST_RULES, MANIFEST_ROOT, "not checked: manifest not supplied")
    elif not isinstance(manifest, dict):
        results.append(
            RuleResult(
                "manifest.schema", MUST, FAIL, MANIFEST_ROOT, "the manifest must be a JSON object"
            )
        )
        results += skipped(
            _MANIFEST_RULES[1:], MANIFEST_ROOT, "not checked: the manifest is not a JSON object"
        )
    else:
        schema_results, legacy = manifest_schema_rule(manifest)
        results += schema_results
        results += manifest_auth_rule(manifest, checks.auth_mode)
        results += manifest_skills_rule(manifest, skill_ids(view))
        results += manifest_endpoint_rule(manifest, checks.interfaces)

    report = AAPReport(
        compliant=False,
        aap_version="0.1",
        verdict="",
        is_dealer_agent=True,
        implemented_skills=skill_ids(view),
        results=results,
    )
    failed, warned = report.failed_rules(), report.warned_rules()
    report.compliant = not failed and report.complete
    if failed:
        report.verdict = f"Not compliant: {plural(len(failed), 'MUST rule', 'fail')}"
        if legacy:
            report.verdict += "; the manifest is legacy 0.1.0"
    elif manifest is None:
        unchecked = plural(len(report.skipped_rules()), "MUST rule")
        report.verdict = (
            f"Not compliant: the manifest is missing, so {unchecked} could not be checked "
            "(the card rules pass)"
        )
    else:
        report.verdict = "AAP v0.1 compliant"
    if warned and not failed:
        report.verdict += f", with {plural(len(warned), 'SHOULD warning')}"
    return report
