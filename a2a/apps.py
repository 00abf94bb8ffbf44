from django.apps import AppConfig


class A2AConfig(AppConfig):
    name = "a2a"
    label = "a2a"
    verbose_name = "A2A"

    def ready(self) -> None:
        from a2a import extensions, receivers  # noqa: F401  (receivers: connects them)

        extensions.register()
