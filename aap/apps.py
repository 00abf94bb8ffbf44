from django.apps import AppConfig


class AAPConfig(AppConfig):
    name = "aap"
    label = "aap"
    verbose_name = "Auto Agent Protocol"

    def ready(self) -> None:
        from aap import extensions, receivers  # noqa: F401  (receivers: connects them)

        extensions.register()
