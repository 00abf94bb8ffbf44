from django.core.management.base import BaseCommand

from registry.events.delivery import webhooks_deliver


class Command(BaseCommand):
    help = "Send every webhook delivery that is due now, in order, per subscription."

    def handle(self, *args, **options):
        self.stdout.write(f"{webhooks_deliver()} webhook deliveries.")
