from django.core.management.base import BaseCommand, CommandError

from registry.semantic.vectors import vectors_rebuild


class Command(BaseCommand):
    help = (
        "Embed every agent's text again for search by meaning (after an upgrade or a model "
        "change); --missing: only the agents without a vector of the current model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--missing", action="store_true")

    def handle(self, *args, **options):
        from registry.semantic.client import SemanticUnavailable

        try:
            count = vectors_rebuild(missing_only=options["missing"])
        except SemanticUnavailable as exc:
            raise CommandError(f"The embedding service did not answer: {exc}") from None
        self.stdout.write(f"Embedded {count} agents.")
