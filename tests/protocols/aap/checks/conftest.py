"""Fixtures and helpers of the AAP checker's tests: the official example documents, a card
in camelCase, and the results a report holds for one rule."""

import json
from pathlib import Path
from typing import Any

import pytest

from protocols.aap.checks.report import AAPReport, report_as_text

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "aap"

SCHEMAS = Path(__file__).resolve().parents[4] / "protocols" / "aap" / "checks" / "schemas"

MISSING_MANIFEST = (
    "Not compliant: the manifest is missing, so 4 MUST rules could not be checked "
    "(the card rules pass)"
)


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture
def public_card() -> dict[str, Any]:
    return load("card-public.json")


@pytest.fixture
def public_manifest() -> dict[str, Any]:
    return load("manifest-public.json")


@pytest.fixture
def bearer_card() -> dict[str, Any]:
    return load("card-bearer.json")


@pytest.fixture
def bearer_manifest() -> dict[str, Any]:
    return load("manifest-bearer.json")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def to_camel_case(value: Any) -> Any:
    """A snake_case card in A2A's camelCase spelling; extension params stay as AAP writes them."""
    if isinstance(value, list):
        return [to_camel_case(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        camel(key): member if key == "params" else to_camel_case(member)
        for key, member in value.items()
    }


def results_of(report: AAPReport, rule: str) -> list[tuple[str, str]]:
    return [(r.status, r.path) for r in report.results if r.rule == rule]


def broken_rules(report: AAPReport) -> set[str]:
    return {r.rule for r in report.results if r.status in {"fail", "warn"}}


def assert_only_broken(report: AAPReport, rule: str, status: str, path: str) -> None:
    assert (status, path) in results_of(report, rule), report_as_text(report)
    assert broken_rules(report) == {rule}, report_as_text(report)


def params(card: dict[str, Any]) -> dict[str, Any]:
    return card["capabilities"]["extensions"][0]["params"]
