from django.conf import settings
from django.core.management.base import BaseCommand

from registry.semantic.service import serve


class Command(BaseCommand):
    help = (
        "Run the embedding service: the model and every agent's vector in this one process, "
        "asked by the web workers over the Unix socket SEMANTIC_SOCKET (or --socket)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--socket", default="")

    def handle(self, *args, **options):
        path = (
            options["socket"] or settings.SEMANTIC_SOCKET or str(settings.VAR_DIR / "semantic.sock")
        )
        self.stdout.write(f"Embedding service on {path}")
        serve(path)
