from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured


class ArdConfig(AppConfig):
    name = "protocols.ard"
    label = "ard"
    verbose_name = "AI Catalog and ARD"

    def ready(self) -> None:
        if not apps.is_installed("protocols.a2a"):
            raise ImproperlyConfigured("REGISTRY_PROTOCOL_APPS: ard builds on a2a and needs it")
        from protocols.ard import extensions, receivers  # noqa: F401

        extensions.register()
