"""Bulk imports in several processes at once write what one process writes, skip repeats
as one process does, and stop at the first refused batch. PostgreSQL only: SQLite takes one
writer at a time, and the import then runs in one process."""

import json

import pytest
from django.core.management import CommandError, call_command

from bench.generate import card_generate
from protocols.a2a.registration.bulk import card_route, cards_import_processes
from registry.agents.models import Agent
from registry.discovery.generation import generation_read
from tests.protocols.a2a.registration.test_bulk_import import _rows, _tables

on_postgres = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _cards() -> list[dict]:
    cards = [card_generate(7, index) for index in range(40)]
    renamed = dict(cards[5], name="Same URL, another name")
    return [*cards, cards[3], renamed]  # repeats of agents' URLs, later batches


@on_postgres[0]
@on_postgres[1]
def test_processes_write_the_rows_of_one_process_and_skip_repeats():
    cards = _cards()
    one = cards_import_processes(owner="crawler", cards=cards, batch=7, processes=1)
    alone = _rows()
    for model in _tables():
        model.objects.all().delete()
    before = generation_read()

    many = cards_import_processes(owner="crawler", cards=iter(cards), batch=7, processes=3)

    assert (one.created, one.seen, one.failure) == (40, 42, None)
    assert (many.created, many.seen, many.failure) == (40, 42, None)
    assert _rows() == alone
    assert not Agent.objects.filter(name="Same URL, another name").exists()
    assert generation_read() > before


@on_postgres[0]
@on_postgres[1]
def test_the_first_refused_batch_stops_the_import_and_says_why():
    cards = _cards()
    cards[30] = {**cards[30], "supportedInterfaces": "not a list"}
    outcome = cards_import_processes(owner="crawler", cards=cards, batch=4, processes=2)
    assert outcome.failure is not None
    assert "is invalid" in outcome.failure.detail
    assert any(where.endswith("supportedInterfaces") for where, _ in outcome.failure.errors)
    assert outcome.created == Agent.objects.filter(owner="crawler").count() < 40


@on_postgres[0]
@on_postgres[1]
def test_the_command_imports_with_processes_and_reports_a_refusal(tmp_path, capsys):
    path = tmp_path / "crawl.jsonl"
    path.write_text("\n".join(json.dumps(card) for card in _cards()), encoding="utf-8")
    call_command("import_cards", str(path), "--owner", "crawler", "--processes", "2")
    assert "Imported 40 agents from 42 cards (2 skipped)." in capsys.readouterr().out

    path.write_text(json.dumps({"name": "No interfaces"}), encoding="utf-8")
    with pytest.raises(CommandError, match="is invalid"):
        call_command("import_cards", str(path), "--owner", "other", "--processes", "2")
    assert not Agent.objects.filter(owner="other").exists()


@pytest.mark.parametrize(
    ("card", "route"),
    [
        ({"supportedInterfaces": [{"url": "https://a.example/a2a"}]}, "https://a.example/a2a"),
        ({"supported_interfaces": [{"url": "https://b.example"}]}, "https://b.example"),
        ({"url": "https://c.example", "protocolVersion": "0.3.0"}, "https://c.example"),
        ({"supportedInterfaces": "no", "url": 5}, ""),
        (["not", "a", "card"], ""),
    ],
)
def test_a_cards_route_is_its_agents_url_read_without_validating(card, route):
    assert card_route(card) == route


@pytest.mark.django_db
def test_one_process_reads_the_cards_as_it_imports_them():
    counts = []

    def cards():
        for index in range(5):
            counts.append(Agent.objects.count())  # before the card is handed over
            yield card_generate(7, index)

    outcome = cards_import_processes(owner="crawler", cards=cards(), batch=2, processes=1)
    assert (outcome.created, outcome.seen) == (5, 5)
    assert counts == [0, 0, 2, 2, 4]  # a batch imported before the next one is read
