from django.apps import AppConfig


class EntitiesConfig(AppConfig):
    name = "protocols.entities"
    label = "entities"
    verbose_name = "Entity cards (A2E, EDP)"

    def ready(self) -> None:
        # The jobs queued by name (the crawl queues enrichment): registered in every process.
        from protocols.entities import extensions, receivers, tasks  # noqa: F401

        extensions.register()
