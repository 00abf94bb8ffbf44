import signal
import threading

from django.core.management.base import BaseCommand

from protocols.a2a.relay.consumer import relay_consume


class Command(BaseCommand):
    help = (
        "Run the queue relay's consumer: store the agents' replies from "
        "QUEUE_RELAY_REPLY_QUEUE with their tasks, until stopped (Ctrl-C, SIGTERM)."
    )

    def handle(self, *args, **options):
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        relay_consume(stop)
