from django.apps import AppConfig
from django.conf import settings


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "Registry"

    def ready(self) -> None:
        # schema: OpenAPI extensions; security: its deployment checks.
        from registry import extensions, schema, security  # noqa: F401
        from registry.demo import native_demo_load
        from registry.health import healthz_lean
        from registry.models import NATIVE_SOURCE

        extensions.register_source(NATIVE_SOURCE, "Native registration")
        extensions.register_demo_loader("native", native_demo_load)
        extensions.register_lean_route(
            extensions.LeanRoute(
                "/healthz", healthz_lean, exact=True, read_limited=False, database=False
            )
        )
        extensions.register_schedule(
            "endpoints-expire",
            "registry.tasks.endpoints_expire",
            settings.LIVENESS_SWEEP_INTERVAL_SECONDS,
        )
        extensions.register_schedule(
            "endpoints-probe", "registry.tasks.endpoints_probe", settings.PROBE_SWEEP_SECONDS
        )
