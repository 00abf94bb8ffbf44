"""Writes and orchestration of the AAP app: the stored status of each agent's card (kept
by a2a's ``card_stored``, see protocols.aap.receivers), checks of a live domain."""

import dataclasses
import json
from typing import Any
from urllib.parse import urljoin

from django.db import transaction
from django.utils import timezone

from protocols.a2a.models import CardDocument
from protocols.a2a.signals import StoredCard
from protocols.aap.checks.checker import aap_check
from protocols.aap.checks.documents import aap_card_summary, aap_manifest_url
from protocols.aap.checks.report import (
    CARD_ROOT,
    FAIL,
    MANIFEST_ROOT,
    MUST,
    PASS,
    RULES,
    SKIP,
    AAPReport,
    RuleResult,
    report_with_results,
)
from protocols.aap.models import AAPStatus
from registry.agents.models import Agent
from registry.discovery.facts import FACT_FIELDS, facts_values
from registry.discovery.models import AgentFacet
from registry.fastpath.copy import objects_insert, rows_insert
from registry.outbound.fetch import FetchError, fetch_json
from registry.outbound.hosts import domain_parse
from registry.signals import agents_written_send

CARD_PATH = "/.well-known/agent-card.json"
MANIFEST_PATH = "/.well-known/auto-agent-contract.json"
# Fact kinds (registry.extensions) this app writes.
FACT_KINDS = ("aap", "aapCompliant", "aapSkill")


def _unchecked(results: list[RuleResult], reason: str, prefix: str) -> list[RuleResult]:
    """``results`` with the rules of one document marked as skipped for ``reason``."""
    return [
        dataclasses.replace(r, message=f"not checked: {reason}")
        if r.rule.startswith(prefix) and r.status == SKIP
        else r
        for r in results
    ]


# The manifest's address is in the card: without the card it is not fetched.
MANIFEST_UNFETCHED = (
    "not fetched: the card, which gives the manifest's address, could not be fetched"
)


def aap_check_domain(domain: str) -> AAPReport:
    """Fetch a domain's agent card and contract manifest and check both.

    Fetch failures are ``card.fetch`` / ``manifest.fetch`` results, never exceptions:
    without a card nothing else is checked; without a manifest its rules are skipped.
    Raises InvalidHost for text that is not a host name.
    """
    card_url = domain_parse(domain).url(CARD_PATH)
    try:
        _, card = fetch_json(card_url)
    except FetchError as exc:
        reason = "the card could not be fetched"
        results = [RuleResult("card.fetch", MUST, FAIL, card_url, exc.detail)]
        for rule, level in RULES.items():
            root = CARD_ROOT if rule.startswith("card.") else MANIFEST_ROOT
            if rule == "manifest.schema":
                results.append(RuleResult("manifest.fetch", MUST, SKIP, root, MANIFEST_UNFETCHED))
            results.append(RuleResult(rule, level, SKIP, root, f"not checked: {reason}"))
        return AAPReport(
            compliant=False,
            aap_version=None,
            verdict=f"Not compliant: {reason}",
            is_dealer_agent=False,
            results=results,
        )
    card_fetched = RuleResult("card.fetch", MUST, PASS, card_url, "fetched the agent card")

    summary = aap_card_summary(card)
    if summary["aapVersion"] != "0.1":
        report = aap_check(card)
        skipped = RuleResult(
            "manifest.fetch",
            MUST,
            SKIP,
            MANIFEST_ROOT,
            "not fetched: the card does not declare AAP v0.1",
        )
        return report_with_results(report, [card_fetched, skipped])

    manifest_url = urljoin(card_url, aap_manifest_url(card) or MANIFEST_PATH)
    try:
        _, manifest = fetch_json(manifest_url)
    except FetchError as exc:
        report = aap_check(card)
        report.results = _unchecked(
            report.results, "the manifest could not be fetched", "manifest."
        )
        failed = RuleResult("manifest.fetch", MUST, FAIL, manifest_url, exc.detail)
        return report_with_results(report, [card_fetched, failed])
    manifest_fetched = RuleResult(
        "manifest.fetch", MUST, PASS, manifest_url, "fetched the contract manifest"
    )
    return report_with_results(aap_check(card, manifest), [card_fetched, manifest_fetched])


def aap_status_of(card: Any) -> dict[str, Any]:
    """The AAP v0.1 card check of a card (no network), as AAPStatus field values."""
    summary = aap_card_summary(card)
    if summary["isDealerAgent"]:
        report = aap_check(card)
        # The card's own rules: no manifest here, so the report itself is never compliant.
        compliant = report.aap_version == "0.1" and not report.failed_rules()
        skills = list(report.implemented_skills)
    else:
        compliant, skills = False, []
    return {
        "is_dealer_agent": summary["isDealerAgent"],
        "compliant": compliant,
        # A URI may claim any version ("v1.2.3.4…"); the column holds real ones.
        "aap_version": (summary["aapVersion"] or "")[: AAPStatus.VERSION_MAX_LENGTH],
        "implemented_skills": skills,
        "checked_at": timezone.now(),
    }


def aap_facts(status: dict[str, Any]) -> set[tuple[str, str]]:
    """The facts (registry.extensions) of an AAP status: a dealer declares AAP; its card's
    compliance; its skills."""
    if not status["is_dealer_agent"]:
        return set()
    facts = {("aap", "true"), ("aapCompliant", "true" if status["compliant"] else "false")}
    facts.update(("aapSkill", skill) for skill in status["implemented_skills"])
    return facts


def aap_statuses_store(cards: list[StoredCard]) -> None:
    """Store the AAP v0.1 card check of each agent's current card (no network), in bulk;
    an agent without a card has no status."""
    earlier = [stored.agent.pk for stored in cards if not stored.created]
    if earlier:
        AAPStatus.objects.filter(agent_id__in=earlier).delete()
        AgentFacet.objects.filter(agent_id__in=earlier, kind__in=FACT_KINDS).delete()
    statuses, facts = [], []
    for stored in cards:
        if stored.card is None:
            continue
        values = aap_status_of(stored.card)
        statuses.append(AAPStatus(agent=stored.agent, **values))
        facts += facts_values(stored.agent.pk, aap_facts(values))
    objects_insert(statuses)
    rows_insert(AgentFacet, FACT_FIELDS, facts)
    agents_written_send([stored.agent.pk for stored in cards])  # the agent JSON's aap


@transaction.atomic
def aap_statuses_refresh(*, chunk: int = 500) -> int:
    """Recompute every stored AAP status from the agents' stored cards (after the rules
    change); returns how many agents were rechecked."""
    count = 0
    documents = CardDocument.objects.only("agent_id", "body").order_by("agent_id")
    batch: list[StoredCard] = []
    for document in documents.iterator(chunk_size=chunk):
        batch.append(StoredCard(Agent(pk=document.agent_id), json.loads(bytes(document.body))))
        if len(batch) == chunk:
            aap_statuses_store(batch)
            count, batch = count + len(batch), []
    aap_statuses_store(batch)
    return count + len(batch)
