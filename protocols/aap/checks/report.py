"""What an AAP check reports: one result per rule finding, the verdict, and the
checklist as text."""

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

MUST = "MUST"


SHOULD = "SHOULD"


PASS = "pass"


FAIL = "fail"


WARN = "warn"


SKIP = "skip"


RULES: dict[str, str] = {
    "card.a2a": MUST,
    "card.extension": MUST,
    "card.manifest_url": SHOULD,
    "card.skill_vocabulary": SHOULD,
    "card.skills": MUST,
    "card.binding": MUST,
    "card.auth": MUST,
    "manifest.schema": MUST,
    "manifest.auth_type": MUST,
    "manifest.skills": MUST,
    "manifest.endpoint": MUST,
}


CARD_ROOT = "(card)"


MANIFEST_ROOT = "(manifest)"


@dataclass(frozen=True)
class RuleResult:
    rule: str
    level: str  # MUST or SHOULD
    status: str  # pass, fail, warn or skip
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class AAPReport:
    """``compliant``: every MUST rule was checked and none fails. ``complete``: every MUST
    rule was checked (none skipped, e.g. for a missing manifest)."""

    compliant: bool
    aap_version: str | None
    verdict: str
    is_dealer_agent: bool
    implemented_skills: list[str] = field(default_factory=list)
    results: list[RuleResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.skipped_rules()

    def as_dict(self) -> dict[str, Any]:
        return {
            "compliant": self.compliant,
            "complete": self.complete,
            "aapVersion": self.aap_version,
            "verdict": self.verdict,
            "isDealerAgent": self.is_dealer_agent,
            "implementedSkills": list(self.implemented_skills),
            "results": [result.as_dict() for result in self.results],
        }

    def failed_rules(self) -> list[str]:
        """Ids of the MUST rules that fail, in rule order."""
        return list(dict.fromkeys(r.rule for r in self.results if r.status == FAIL))

    def skipped_rules(self) -> list[str]:
        """Ids of the MUST rules not checked, in rule order."""
        return list(
            dict.fromkeys(r.rule for r in self.results if r.status == SKIP and r.level == MUST)
        )

    def warned_rules(self) -> list[str]:
        return list(dict.fromkeys(r.rule for r in self.results if r.status == WARN))


def plural(count: int, noun: str, verb: str = "") -> str:
    words = f"{count} {noun}{'' if count == 1 else 's'}"
    if verb:
        words += f" {verb}{'s' if count == 1 else ''}"
    return words


def report_with_results(report: AAPReport, results: Iterable[RuleResult]) -> AAPReport:
    """``report`` with the results of checks made outside ``aap_check``, such as fetches.

    Each extra result goes before the first result about the same document (``card.``,
    ``manifest.``). A failing one makes the report non-compliant, and the verdict then
    counts the failing MUST rules again.
    """
    extra = list(results)
    merged = list(report.results)
    for result in extra:
        document = result.rule.split(".", 1)[0] + "."
        at = next(
            (i for i, r in enumerate(merged) if r.rule.startswith(document) and r not in extra),
            len(merged),
        )
        merged.insert(at, result)
    combined = AAPReport(
        compliant=report.compliant,
        aap_version=report.aap_version,
        verdict=report.verdict,
        is_dealer_agent=report.is_dealer_agent,
        implemented_skills=list(report.implemented_skills),
        results=merged,
    )
    if any(r.status == FAIL for r in extra):
        combined.compliant = False
        failed = combined.failed_rules()
        combined.verdict = f"Not compliant: {plural(len(failed), 'MUST rule', 'fail')}"
    elif not combined.complete:
        combined.compliant = False
    return combined


STATUS_MARKS = {PASS: "✔", FAIL: "✘", WARN: "!", SKIP: "\u2013"}  # en dash


def report_as_text(report: AAPReport) -> str:
    """The report as a checklist, one line per result, for terminals and logs."""
    width = max(len(rule) for rule in [*RULES, *(r.rule for r in report.results)])
    lines = [
        f"{STATUS_MARKS[r.status]} {r.rule:<{width}}  {r.level:<6}  {r.path}: {r.message}"
        for r in report.results
    ]
    skills = ", ".join(report.implemented_skills) or "none"
    lines.append("")
    lines.append(
        f"AAP version: {report.aap_version or 'none'} · dealer agent: "
        f"{'yes' if report.is_dealer_agent else 'no'} · implemented skills: {skills}"
    )
    lines.append(f"Verdict: {report.verdict}")
    return "\n".join(lines)
