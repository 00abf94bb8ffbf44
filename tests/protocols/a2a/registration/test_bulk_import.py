"""The bulk import writes what registering each card one by one writes."""

import json
import re
from datetime import datetime

import pytest
from django.apps import apps
from django.db import connection

from bench.generate import card_generate
from protocols.a2a.models import AgentIdentity, CardDocument, CardProvenance, CardVersion
from protocols.a2a.registration.bulk import cards_bulk_import
from protocols.a2a.registration.services import agent_register_card
from registry.access.models import AuditEntry
from registry.agents.models import Agent, AgentSearchText, Capability, CapabilityTag, Endpoint
from registry.discovery.models import AgentFacet, AgentFilterKeys, AgentListing
from registry.events.models import Event
from registry.semantic.models import AgentVector

pytestmark = pytest.mark.django_db

# Generated cards of every shape: 1.0, legacy 0.3 (15, 19), extensions (2, 9), AAP (53, 79).
INDICES = [0, 2, 3, 9, 15, 19, 53, 79]
TABLES = [
    Agent,
    Capability,
    CapabilityTag,
    Endpoint,
    AgentSearchText,
    AgentFacet,
    CardDocument,
    CardVersion,
    CardProvenance,
    AgentIdentity,
    AgentListing,
    AgentVector,
    Event,
    AuditEntry,
]
# What the apps above A2A write, when they are installed (CI also runs core + a2a alone).
APP_TABLES = [("aap", "AAPStatus"), ("ard", "CatalogEntry")]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def _tables() -> list:
    found = TABLES + [
        apps.get_model(*t) for t in APP_TABLES if apps.is_installed(f"protocols.{t[0]}")
    ]
    # The filter keys, which PostgreSQL's triggers keep (empty elsewhere).
    return found + ([AgentFilterKeys] if connection.vendor == "postgresql" else [])


def _value(value, names: dict[str, str]) -> str:
    """A value with what differs between two registrations of the same card (agent ids,
    row ids, times) replaced by what does not (the agent's name) or by a placeholder."""
    if isinstance(value, datetime):
        return "<time>"
    if isinstance(value, bytes | memoryview):
        value = bytes(value).decode(errors="backslashreplace")  # vectors are not text
    text = str(value)
    text = UUID.sub(lambda m: names.get(m.group(), "<uuid>"), text)
    return TIME.sub("<time>", text)


def _rows() -> dict[str, list[tuple]]:
    names = {str(pk): name for pk, name in Agent.objects.values_list("pk", "name")}
    tables = {}
    for model in _tables():
        fields = [f.attname for f in model._meta.concrete_fields if f.attname != "id"]
        if model is Event:
            fields.remove("digest")  # of the listing, which holds the agent's id
        rows = model.objects.values_list(*fields)
        tables[model.__name__] = sorted(tuple(_value(v, names) for v in row) for row in rows)
    return tables


def test_a_bulk_import_writes_the_rows_of_one_by_one_registrations():
    cards = [card_generate(7, index) for index in INDICES]
    for card in cards:
        agent_register_card(owner="crawler", card=card)
    one_by_one = _rows()
    for model in _tables():
        model.objects.all().delete()

    assert cards_bulk_import(owner="crawler", cards=cards) == len(cards)
    bulk = _rows()

    assert set(bulk) == set(one_by_one)
    for table, rows in one_by_one.items():
        assert rows, table
        # Where the card came from says it was imported: the version's change, the
        # provenance's discovery path.
        said = {"CardVersion": "register", "CardProvenance": "posted"}.get(table)
        rows = sorted(tuple("import" if v == said else v for v in row) for row in rows)
        assert bulk[table] == rows, table


def _card_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if 'FROM "a2a_carddocument"' in q["sql"]]


def test_the_cards_are_read_once_for_every_receiver_and_not_after_a_bulk_import():
    """``protocols.a2a.cards.documents.cards_stored``: the receivers of one agents_written (the
    catalog
    entries, the texts embedded) read the agents' cards in one statement, and not at all
    the cards a bulk import offered as it stored them; what they derive is the same (the
    test above compares every table)."""
    from django.test.utils import CaptureQueriesContext

    from protocols.a2a.cards.documents import cards_stored
    from registry.signals import agents_written_send, writes_batched

    cards = [card_generate(8, index) for index in INDICES]
    with CaptureQueriesContext(connection) as imported:
        assert cards_bulk_import(owner="crawler", cards=cards) == len(cards)
    assert _card_reads(imported.captured_queries) == []

    ids = list(Agent.objects.values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as written, writes_batched():
        agents_written_send(ids)
    assert len(_card_reads(written.captured_queries)) == 1
    # The shared read is the stored document, decoded.
    stored = cards_stored(ids)
    assert set(stored) == set(ids)
    document = CardDocument.objects.get(agent_id=ids[0])
    assert stored[ids[0]].sha256 == document.sha256
    assert stored[ids[0]].card == json.loads(bytes(document.body))
