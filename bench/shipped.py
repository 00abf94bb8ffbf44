"""``make serve`` exactly as shipped: its Procfile (Procfile.serve) started by honcho with the
environment the Makefile gives it, and nothing of the benchmark's own tuning (its rate
limits, its log level). Only what any deployment must set is set: the database, the
public URL, the secret key, the allowed hosts.

Its read limit (``RATE_LIMIT_READ``, 1,200 a minute per client address as shipped) stays:
the load comes from many client addresses instead (``CLIENT_ADDRESSES``, the loopback
addresses 127.0.1.0-127.0.1.255: the built-in generator binds its connections to them in
turn), each far below its limit, as a registry's many users are.
"""

import os
import sys
from pathlib import Path

from bench.load import BASE_URL
from bench.server import _REGISTRY_VARIABLES, Server, port_free

# 256 client addresses: a 15 s run at 3,000 requests/s sends 176 requests from each, far
# below the 1,200 a minute each may send.
CLIENT_ADDRESSES = [f"127.0.1.{n}" for n in range(256)]
_SHIPPED_UNSET = ("RATE_LIMIT_", "LOG_LEVEL", "ACCESS_LOG", "WORKERS", "CARD_CACHE_")


class ShippedServer(Server):
    """honcho running Procfile.serve (gunicorn and the stream server), as ``make serve``."""

    def environment(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _REGISTRY_VARIABLES and not k.startswith(_SHIPPED_UNSET)
        }
        bin_dir = str(Path(sys.executable).parent)
        env.update(
            DATABASE_URL=self.database_url,
            DEBUG="0",
            REGISTRY_BASE_URL=BASE_URL,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            SECRET_KEY="bench",
            STATIC_ROOT=str(self.log_path.parent / "static"),
            # What the Makefile's serve target sets.
            HOST="127.0.0.1",
            PORT=str(self.port),
            EVENTS_PORT=str(self.events_port),
            EVENTS_STREAM_URL=f"http://127.0.0.1:{self.events_port}/events",
            PATH=f"{bin_dir}:{env.get('PATH', '')}",
        )
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        return env

    label = "make serve"

    def command(self) -> list[str]:
        return [str(Path(sys.executable).parent / "honcho"), "start", "-f", "Procfile.serve"]

    def runs_semantic(self) -> bool:
        return False  # Procfile.serve runs the embedding service itself

    def collects_static(self) -> bool:
        return True  # make serve's steps before honcho: migrate (done) and collectstatic

    def start(self, timeout: float = 180.0) -> None:  # (as Server's: a loaded machine)
        self.events_port = port_free()
        super().start(timeout)
