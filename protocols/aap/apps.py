from django.apps import AppConfig


class AAPConfig(AppConfig):
    name = "protocols.aap"
    label = "aap"
    verbose_name = "Auto Agent Protocol"

    def ready(self) -> None:
        from protocols.aap import extensions, receivers  # noqa: F401

        extensions.register()
