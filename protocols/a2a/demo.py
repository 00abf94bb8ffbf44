"""The A2A app's demo agents for `make run`: registered by their cards (1.0 and 0.3); and
the executor of the demo's queue agent."""

import re

from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater

CARD_AGENTS = [
    {
        "name": "Weather Agent",
        "description": "Forecasts and current conditions for any city.",
        "supportedInterfaces": [
            {
                "url": "https://weather.example.com/a2a/v1",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            },
        ],
        "provider": {"organization": "Example Weather Co", "url": "https://weather.example.com"},
        "version": "2.1.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "forecast",
                "name": "Forecast",
                "description": "Forecast for a city.",
                "tags": ["weather", "forecast"],
                "examples": ["Weather in Paris tomorrow?"],
            },
        ],
    },
    {
        "name": "Legacy Translator",
        "description": "Translates text between languages (an A2A 0.3 card).",
        "url": "https://translator.example.org/a2a",
        "preferredTransport": "JSONRPC",
        "version": "0.9.1",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "translate",
                "name": "Translate",
                "description": "Any language to any other.",
                "tags": ["language", "translation", "nlp"],
            },
        ],
    },
]


def card_demo_load(owner: str, existing: set[str]) -> int:
    return cards_demo_register(owner, existing, CARD_AGENTS)


def cards_demo_register(owner: str, existing: set[str], cards: list[dict]) -> int:
    """Register the demo cards whose names are not in ``existing``; returns how many."""
    from protocols.a2a.registration.services import agent_register_card

    fresh = [card for card in cards if card["name"] not in existing]
    for card in fresh:
        agent_register_card(owner=owner, card=card)
    return len(fresh)


# The demo's queue agent (`manage.py queue_agent --demo`, a line of the Procfile): the
# Invoice Extractor's A2A endpoint is the AMQP queue "invoices.extract" (registry.agents.demo).
DEMO_QUEUE = "invoices.extract"
LINE = re.compile(r"^\s*(\d+)\s*x\s*(.+?)\s*@\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


def invoice_lines(text: str) -> list[dict]:
    """The line items of a text invoice: lines like ``2 x Widget @ 3.50``."""
    found = (LINE.match(line) for line in text.splitlines())
    return [{"quantity": int(m[1]), "item": m[2], "unitPrice": float(m[3])} for m in found if m]


class InvoiceLinesExecutor(AgentExecutor):
    """The demo queue agent's executor: answers a text invoice with its line items (a data
    artifact) and their total, in a completed task."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.submit()
        lines = invoice_lines(context.get_user_input())
        total = round(sum(line["quantity"] * line["unitPrice"] for line in lines), 2)
        await updater.add_artifact(
            [new_data_part({"lines": lines, "total": total})], name="line-items"
        )
        count = f"{len(lines)} line item{'' if len(lines) == 1 else 's'}"
        summary = f"Found {count}, total {total:.2f}."
        await updater.complete(updater.new_agent_message([new_text_part(summary)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id or "")
        await updater.cancel()
