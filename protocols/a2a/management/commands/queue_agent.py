import importlib
import logging
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from protocols.a2a.demo import DEMO_QUEUE, InvoiceLinesExecutor
from protocols.a2a.relay.queue_agent import QueueAgent


class Command(BaseCommand):
    help = (
        "Serve an a2a-sdk AgentExecutor from an AMQP queue (the agent's side of the queue "
        "relay): --demo for the demo's Invoice Extractor, or QUEUE --executor module:Class."
    )

    def add_arguments(self, parser):
        parser.add_argument("queue", nargs="?", help="The queue to consume (the agent's).")
        parser.add_argument("--executor", help="The AgentExecutor class, as module:Class.")
        parser.add_argument("--demo", action="store_true", help="The demo's queue agent.")
        parser.add_argument(
            "--broker-url",
            default=None,
            help="The broker (default: QUEUE_RELAY_BROKER_URL).",
        )

    def handle(self, *args, queue, executor, demo, broker_url, **options):
        if demo:
            queue, instance = queue or DEMO_QUEUE, InvoiceLinesExecutor()
        elif queue and executor:
            module, _, name = executor.partition(":")
            try:
                instance = getattr(importlib.import_module(module), name)()
            except (ImportError, AttributeError, ValueError) as exc:
                raise CommandError(f"--executor {executor}: {exc}") from None
        else:
            raise CommandError("Give --demo, or a QUEUE and --executor module:Class.")
        logging.getLogger("protocols.a2a.relay.queue_agent").setLevel(logging.INFO)
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        agent = QueueAgent(
            instance, queue, broker_url=broker_url or settings.QUEUE_RELAY_BROKER_URL
        )
        agent.run(stop)
