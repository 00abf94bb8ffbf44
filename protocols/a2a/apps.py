from django.apps import AppConfig


class A2AConfig(AppConfig):
    name = "protocols.a2a"
    label = "a2a"
    verbose_name = "A2A"

    def ready(self) -> None:
        from protocols.a2a import extensions, receivers  # noqa: F401
        from protocols.a2a.face.message_lean import message_lean
        from registry.extensions import LeanRoute, register_lean_route

        extensions.register()
        # Discovery questions, the A2A face's most frequent messages, on the lean lane
        # (here, not in protocols.a2a.extensions: the skills they run import that module).
        register_lean_route(
            LeanRoute(
                "/a2a/jsonrpc",
                message_lean,
                exact=True,
                read_limited=False,
                anonymous=True,
                method="POST",
            )
        )
