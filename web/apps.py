from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Browse pages"

    def ready(self) -> None:
        from registry import extensions

        extensions.register_urls("web.urls")
