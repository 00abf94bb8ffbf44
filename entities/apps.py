from django.apps import AppConfig


class EntitiesConfig(AppConfig):
    name = "entities"
    label = "entities"
    verbose_name = "Entity cards (A2E, EDP)"

    def ready(self) -> None:
        # The jobs queued by name (the crawl queues enrichment): registered in every process.
        from entities import (  # noqa: F401  (receivers: connects them)
            extensions,
            receivers,
            tasks,
        )

        extensions.register()
