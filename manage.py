#!/usr/bin/env python
import os
import secrets
import sys

# Commands that only read or write the project's code, never serve or touch data: they run
# with the development defaults, so a bare checkout can check its migrations without the
# settings a deployment must give (SECRET_KEY, REGISTRY_BASE_URL).
CODE_COMMANDS = {"makemigrations"}
# Commands that sign nothing: without a SECRET_KEY (a checkout `make run` has not set up)
# they run with a throwaway one, so a newcomer's first `manage.py help` answers. Never a
# command that serves: a key that changes each run would void every session and signature.
SECRETLESS_COMMANDS = {"help", "--help", "-h", "version", "--version", "check", "showmigrations"}


def secretless(argv: list[str]) -> bool:
    """Whether this call may run with a throwaway key: no command, or one that signs nothing.
    Never `check --deploy`: it judges the deployment's own key."""
    if "--deploy" in argv:
        return False
    return len(argv) < 2 or argv[1] in SECRETLESS_COMMANDS


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    if len(sys.argv) > 1 and sys.argv[1] in CODE_COMMANDS:
        os.environ.setdefault("DEBUG", "1")
    if secretless(sys.argv):
        from registry.devenv import env_load

        env_load()  # the checkout's .env first: its key, when it has one, wins
        if not os.environ.get("SECRET_KEY"):
            os.environ["SECRET_KEY"] = secrets.token_urlsafe(50)
        os.environ.setdefault("REGISTRY_BASE_URL", "http://127.0.0.1:8000")
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
