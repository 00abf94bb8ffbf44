"""The checkout's development environment: the ``.env`` file that ``make run`` writes and
that the settings read, so ``make run``, ``make serve``, ``make worker`` and every
``manage.py`` call in the checkout share one environment.

``python -m registry.devenv HOST PORT [EVENTS_PORT]`` (the first step of ``make run``) checks
that the port and the event stream's (default PORT+1) are free, stopping with one line that
names a free pair when they are not, before anything is migrated or queued; then
writes ``.env``: ``DEBUG=1``, a ``SECRET_KEY`` generated the first time and kept after,
``REGISTRY_BASE_URL`` for the host and port, and ``DATABASE_URL`` (the one in the
environment, else the one already written, else the checkout's SQLite file). Plain Python:
it runs before Django is set up.
"""

import errno
import os
import secrets
import socket
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
ENV_FILE = BASE_DIR / ".env"
HEADER = "# Written by `make run` (registry/devenv.py); git-ignored. The environment wins.\n"


def env_file_path() -> Path | None:
    """The file the settings read: ``REGISTRY_ENV_FILE`` (empty: none), else ``.env``."""
    chosen = os.environ.get("REGISTRY_ENV_FILE")
    if chosen is None:
        return ENV_FILE
    return Path(chosen) if chosen else None


def env_load() -> None:
    """Read the environment file into the environment; a variable already set wins."""
    if (path := env_file_path()) is not None:
        from dotenv import load_dotenv

        load_dotenv(path, override=False)


def port_busy(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, or None when it can."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return "already in use"
            return error.strerror or str(error)
    return None


def free_pair_after(host: str, port: int, tries: int = 200) -> int | None:
    """The first port above ``port`` that is free on ``host`` with the one after it (the web
    server's and the event stream's of a second ``make run``), or None when none is near."""
    for candidate in range(port + 1, min(port + 1 + tries, 65535)):
        if not port_busy(host, candidate) and not port_busy(host, candidate + 1):
            return candidate
    return None


def read(path: Path) -> dict[str, str]:
    values = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            name, sep, value = line.partition("=")
            if sep and not line.lstrip().startswith("#"):
                values[name.strip()] = value.strip()
    return values


def write(path: Path, host: str, port: int) -> dict[str, str]:
    """Write the environment file for ``make run`` on host:port; returns what it holds."""
    url_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host  # noqa: S104 (a URL)
    values = read(path)
    values["DEBUG"] = "1"
    values.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    values["REGISTRY_BASE_URL"] = os.environ.get("REGISTRY_BASE_URL") or f"http://{url_host}:{port}"
    values["DATABASE_URL"] = (
        os.environ.get("DATABASE_URL")
        or values.get("DATABASE_URL")
        or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
    )
    path.write_text(HEADER + "".join(f"{name}={value}\n" for name, value in values.items()))
    path.chmod(0o600)
    return values


def busy_message(host: str, port: int, events_port: int) -> str | None:
    """The one line ``make run`` stops with when its port or its event stream's is taken."""
    checked = (("port", port), ("event stream's port", events_port))
    busy = [
        (which, number, reason) for which, number in checked if (reason := port_busy(host, number))
    ]
    if not busy:
        return None
    which, number, reason = busy[0]
    line = f"make run: {which} {number} on {host} is {reason} (another `make run`?): stop what "
    if (free := free_pair_after(host, max(port, events_port))) is None:
        return line + "listens there, or choose another port: make run PORT=... (and PORT+1)"
    return line + (
        f"listens there, or choose another port: make run PORT={free} "
        f"({free} and {free + 1}, for the event stream, are free)"
    )


def main(argv: list[str]) -> int:
    host, port = argv[0], int(argv[1])
    events_port = int(argv[2]) if len(argv) > 2 else port + 1
    if message := busy_message(host, port, events_port):
        print(message, file=sys.stderr)
        return 1
    if (path := env_file_path()) is not None:
        write(path, host, port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
