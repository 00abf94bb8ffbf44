from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured


class ArdConfig(AppConfig):
    name = "ard"
    label = "ard"
    verbose_name = "AI Catalog and ARD"

    def ready(self) -> None:
        if not apps.is_installed("a2a"):
            raise ImproperlyConfigured("REGISTRY_PROTOCOL_APPS: ard builds on a2a and needs it")
        from ard import extensions, receivers  # noqa: F401  (receivers: connects them)

        extensions.register()
