from django.apps import AppConfig


class AAPConfig(AppConfig):
    name = "aap"
    label = "aap"
    verbose_name = "Auto Agent Protocol"
