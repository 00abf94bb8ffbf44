#!/usr/bin/env python
import os
import sys

# Commands that only read or write the project's code, never serve or touch data: they run
# with the development defaults, so a bare checkout can check its migrations without the
# settings a deployment must give (SECRET_KEY, REGISTRY_BASE_URL).
CODE_COMMANDS = {"makemigrations"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    if len(sys.argv) > 1 and sys.argv[1] in CODE_COMMANDS:
        os.environ.setdefault("DEBUG", "1")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        _ = settings.INSTALLED_APPS  # reads the settings (and the checkout's .env)
    except ImproperlyConfigured as error:
        # One line naming the setting and the fix; a traceback would only bury it.
        sys.exit(f"manage.py: {error}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
