"""Bulk card import: many cards in one transaction (imports, crawls, benchmarks), and
many such transactions side by side in processes of their own (``cards_import_processes``)."""

import gc
import hashlib
import itertools
import multiprocessing
import queue
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from protocols.a2a.cards.documents import StoredDocument, cards_offer
from protocols.a2a.cards.mapping import card_facts, card_to_agent_input
from protocols.a2a.cards.signatures import SignatureResult
from protocols.a2a.cards.validation import card_validate
from protocols.a2a.models import AgentIdentity, CardDocument, CardProvenance
from protocols.a2a.registration.provenance import card_signature_check, trust_facts
from protocols.a2a.registration.services import CARD_SOURCE, WRITER
from protocols.a2a.signals import StoredCard, cards_stored_send
from protocols.a2a.versions.history import version_rows
from registry.access.audit import audit_actor
from registry.agents import services as core
from registry.discovery.facts import FACT_FIELDS, facts_values
from registry.discovery.filter_keys import filter_keys_at_end
from registry.discovery.generation import generation_bump_at_end
from registry.discovery.models import AgentFacet
from registry.fastpath.copy import objects_insert, rows_insert
from registry.http.jsonutil import Problem, canonical_dumps
from registry.http.problems import ProblemError
from registry.moderation.scanning import findings_of
from registry.semantic import client as semantic_client
from registry.signals import writes_batched


def cards_bulk_import(*, owner: str, cards: list[dict]) -> int:
    """Register many cards with bulk inserts, through the core's bulk service (the same
    rows, change signals and audit entries as one by one), and send ``card_stored`` once
    for all of them.

    Every card is validated first: one invalid card refuses the batch. Cards whose owner and
    preferred interface URL an agent already has, or that repeat one earlier in the batch,
    are skipped. Signed cards are verified one by one (that needs their JWKS). Returns the
    number of agents created.
    """
    prepared = []
    for index, card in enumerate(cards):
        report = card_validate(card)
        if not report.ok:
            raise ProblemError(
                400,
                "invalid-card",
                f"Card {index} is invalid: {report.errors[0].path} {report.errors[0].message}.",
                [Problem(f"cards[{index}].{p.path}", p.message) for p in report.errors],
            )
        data = card_to_agent_input(card, report.index_view)
        preferred = data.endpoints[0].address if data.endpoints else ""
        prepared.append((card, report, data, preferred))
    taken = set(
        AgentIdentity.objects.filter(
            owner=owner, preferred_url__in=[p[3] for p in prepared]
        ).values_list("preferred_url", flat=True)
    )
    fresh = []
    for entry in prepared:
        if entry[3] not in taken:
            taken.add(entry[3])
            fresh.append(entry)
    signatures = [
        card_signature_check(card, None)
        if report.signed
        else SignatureResult("unsigned", "The card carries no signatures.")
        for card, report, _, _ in fresh
    ]
    # Every listing is built once, in bulk, after the cards, provenances and AAP statuses;
    # the agents' filter keys are refreshed once, after all of their rows; the data
    # generation is bumped last, so that imports side by side wait on each other's lock of
    # it only for their commits.
    with transaction.atomic(), generation_bump_at_end(), filter_keys_at_end(), writes_batched():
        agents = core.agents_bulk_create(
            owner=owner, items=[data for _, _, data, _ in fresh], source=CARD_SOURCE, writer=WRITER
        )
        documents, versions, provenances, identities, facts = [], [], [], [], []
        now = timezone.now()
        findings = findings_of([agent.pk for agent in agents])
        for agent, (card, report, _, preferred), signature in zip(
            agents, fresh, signatures, strict=True
        ):
            body = canonical_dumps(card)
            documents.append(
                CardDocument(
                    agent=agent,
                    body=body,
                    sha256=hashlib.sha256(body).hexdigest(),
                    origin=CardDocument.Origin.SUBMITTED,
                    spec_version=report.spec_version or "",
                    naming=report.naming,
                    signed=report.signed,
                )
            )
            version = version_rows(agent, body, change="import", at=now)
            version.findings = findings.get(agent.pk, [])
            versions.append(version)
            provenance = CardProvenance(
                agent=agent,
                discovery_path="import",
                signature=signature.status,
                signature_detail=signature.detail[:2000],
                signature_kid=(signature.kid or "")[:200],
                signature_checked_at=now,
            )
            provenances.append(provenance)
            identities.append(AgentIdentity(agent=agent, owner=owner, preferred_url=preferred))
            facts += facts_values(
                agent.pk, card_facts(card, report.index_view) | trust_facts(provenance)
            )
        for rows in (documents, versions, provenances, identities):
            objects_insert(rows)
        cards_offer(
            {
                document.agent_id: StoredDocument(document.sha256, document.origin, card)
                for document, (card, _, _, _) in zip(documents, fresh, strict=True)
            }
        )
        rows_insert(AgentFacet, FACT_FIELDS, facts)
        cards_stored_send(
            [
                StoredCard(agent, card, created=True)
                for agent, (card, _, _, _) in zip(agents, fresh, strict=True)
            ]
        )
    return len(agents)


@dataclass
class ImportFailure:
    """Why a batch was refused (the first one), as ``ProblemError`` carries it."""

    detail: str
    errors: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ImportOutcome:
    created: int = 0
    seen: int = 0
    failure: ImportFailure | None = None


def card_route(card: dict) -> str:
    """The URL a card's agent is known by for its owner (the preferred interface's, as the
    mapping takes it), read without validating: cards that name the same one go to the
    same process, in order, so one of them is skipped as a repeat there."""
    if not isinstance(card, dict):
        return ""
    for name in ("supportedInterfaces", "supported_interfaces"):
        interfaces = card.get(name)
        if isinstance(interfaces, list) and interfaces and isinstance(interfaces[0], dict):
            url = interfaces[0].get("url")
            if isinstance(url, str):
                return url
    url = card.get("url")
    return url if isinstance(url, str) else ""


def cards_import_processes(
    *,
    owner: str,
    cards: Iterable[dict],
    batch: int = 2000,
    processes: int = 2,
    on_batch: Callable[[int, int], None] | None = None,
) -> ImportOutcome:
    """Import ``cards`` with ``cards_bulk_import`` in ``processes`` processes at once, each
    batch of ``batch`` cards one transaction: what one process spends per card (validation,
    mapping, listings, entries, vectors) is spread over the machine's cores.

    Cards are routed to a process by their agent's URL (``card_route``), so repeats are
    skipped as in one process. On the first refused batch no more are sent; batches other
    processes committed before it stay, as earlier batches do in one process. ``on_batch``
    is called in this process with (created, seen) so far after each batch. With
    ``processes`` 1, inside a transaction (which other processes cannot join) or on SQLite
    (one writer at a time) the batches run here, one after another."""
    outcome = ImportOutcome()
    connection = connections["default"]
    if processes <= 1 or connection.vendor != "postgresql" or connection.in_atomic_block:
        return _import_here(owner, cards, batch, on_batch, outcome)
    context = multiprocessing.get_context("fork")
    semantic_client.warm()  # each process embeds: the model loaded once, shared by the fork
    # A forked child must not share the parent's connections: each opens its own.
    connections.close_all()
    results = context.Queue()
    inboxes = [context.Queue(maxsize=2) for _ in range(processes)]
    workers = [
        context.Process(
            target=_import_worker,
            args=(owner, inbox, results, audit_actor.get()),
            daemon=True,
        )
        for inbox in inboxes
    ]
    for worker in workers:
        worker.start()
    pending = [[] for _ in range(processes)]
    sent = 0

    def settle(block: bool) -> None:
        nonlocal sent
        while sent and (block or not results.empty()):
            try:
                created, seen, failure = results.get(timeout=1)
            except queue.Empty:
                if any(w.exitcode not in (None, 0) for w in workers):
                    raise RuntimeError("an import process died") from None
                continue
            sent -= 1
            outcome.created += created
            outcome.seen += seen
            if failure is not None and outcome.failure is None:
                outcome.failure = ImportFailure(failure[0], failure[1])
            if on_batch is not None:
                on_batch(outcome.created, outcome.seen)
            block = False

    try:
        for card in cards:
            lane = zlib.crc32(card_route(card).encode()) % processes
            pending[lane].append(card)
            if len(pending[lane]) == batch:
                settle(block=False)
                if outcome.failure is not None:
                    break
                inboxes[lane].put(pending[lane])
                sent += 1
                pending[lane] = []
        if outcome.failure is None:
            for lane, rest in enumerate(pending):
                if rest:
                    inboxes[lane].put(rest)
                    sent += 1
        while sent:
            settle(block=True)
    finally:
        for inbox, worker in zip(inboxes, workers, strict=True):
            if worker.is_alive():
                inbox.put(None)
        for worker in workers:
            worker.join()
    return outcome


def _import_here(owner, cards, batch, on_batch, outcome) -> ImportOutcome:
    chunk: list[dict] = []
    for card in itertools.chain(cards, [None]):  # (read as they come: a file may be large)
        if card is not None:
            chunk.append(card)
            if len(chunk) < batch:
                continue
        if not chunk:
            break
        created, seen, failure = _batch_import(owner, chunk)
        outcome.created += created
        outcome.seen += seen
        if on_batch is not None:
            on_batch(outcome.created, outcome.seen)
        if failure is not None:
            outcome.failure = ImportFailure(failure[0], failure[1])
            break
        chunk = []
    return outcome


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for one batch and one collection after it: a batch
    makes millions of objects, and the collections they would set off (each walking every
    object alive) took a fifth of an import's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect()


def _batch_import(owner: str, cards: list[dict]) -> tuple[int, int, tuple | None]:
    """One batch: (created, seen, failure or None). A batch that lost a race for an agent's
    URL to another process (the unique owner and URL) runs again: the repeat is then
    skipped."""
    for attempt in (1, 2):
        try:
            with _collector_paused():
                return cards_bulk_import(owner=owner, cards=cards), len(cards), None
        except ProblemError as exc:
            return 0, 0, (exc.problem_detail, [(p.path, p.message) for p in exc.errors])
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _import_worker(owner: str, inbox, results, actor) -> None:
    """Import the batches sent until None; after a refused one, the rest are answered
    without importing (the parent stops at the first refusal)."""
    audit_actor.set(actor)
    gc.freeze()  # what the fork brought is never garbage: no collection walks it again
    refused = False
    try:
        while (cards := inbox.get()) is not None:
            if refused:
                results.put((0, 0, None))
                continue
            try:
                answer = _batch_import(owner, cards)
            except Exception as exc:  # reported to the parent, which stops sending
                answer = (0, 0, (f"The batch failed: {exc.__class__.__name__}: {exc}", []))
            refused = answer[2] is not None
            results.put(answer)
    finally:
        connections.close_all()
