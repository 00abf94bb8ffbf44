"""A PostgreSQL primary and its streaming replica of their own, in temporary directories:
the installed PostgreSQL's ``initdb`` (``wal_level = replica``, a ``replication`` line in
``pg_hba.conf``), then ``pg_basebackup -R -X stream`` for the replica, each server on a port
of 127.0.0.1. Run as the ``postgres`` OS user when started by root (PostgreSQL refuses to
run as root). Used by the live multi-node test, the benchmark's replica rows and
``make cluster``; it takes a few seconds.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

POSTGRES_BIN = Path(os.environ.get("POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))

# Durability is not what these servers are for: no fsync (the WAL written is as in
# production: full-page writes stay on), and a small shared buffer pool.
_SETTINGS = {
    "wal_level": "replica",
    "max_wal_senders": "4",
    "hot_standby": "on",
    "hot_standby_feedback": "on",
    "fsync": "off",
    "shared_buffers": "32MB",
    "max_connections": "100",
    "listen_addresses": "'127.0.0.1'",
    "wal_keep_size": "256MB",
    "log_min_messages": "warning",
}


class PostgresPairError(RuntimeError):
    """A server of the pair did not start (the message has its log)."""


def available() -> bool:
    """Whether this machine can start a pair (the binaries, and a postgres user when root)."""
    if not (POSTGRES_BIN / "initdb").exists():
        return False
    if os.geteuid() == 0:
        return shutil.which("runuser") is not None and _user_exists("postgres")
    return True


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


class PostgresPair:
    """``start()`` the primary and its replica; ``url(database, replica=...)`` reaches
    them; ``replica_stop()`` / ``replica_start()`` for the replica's outage; ``stop()``
    ends both and removes their directories."""

    def __init__(self, primary_port: int, replica_port: int, directory: str | None = None):
        self.primary_port = primary_port
        self.replica_port = replica_port
        self.root = Path(directory or tempfile.mkdtemp(prefix="registry-pgpair-"))
        self.primary_dir = self.root / "primary"
        self.replica_dir = self.root / "replica"
        self.started = False

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        """A PostgreSQL program, as the postgres user when we are root."""
        argv = [str(POSTGRES_BIN / command[0]), *command[1:]]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise PostgresPairError(f"{command[0]} failed:\n{result.stdout}{result.stderr}")
        return result

    def _server_options(self, port: int) -> str:
        return f"-c port={port} -c unix_socket_directories='{self.root}'"

    def _pg_ctl_start(self, data: Path, port: int) -> None:
        log = data.parent / f"{data.name}.log"
        result = self._run(
            "pg_ctl", "-D", str(data), "-l", str(log), "-w", "-t", "60",
            "-o", self._server_options(port), "start", check=False,
        )  # fmt: skip
        if result.returncode != 0:
            text = log.read_text(errors="replace") if log.exists() else ""
            raise PostgresPairError(f"PostgreSQL on port {port} did not start:\n{text}")

    def _pg_ctl_stop(self, data: Path, mode: str = "fast") -> None:
        if (data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(data), "-m", mode, "-w", "-t", "60", "stop", check=False)

    def start(self) -> "PostgresPair":
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.primary_dir), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--no-sync", "--locale=C.UTF-8",
        )  # fmt: skip
        with open(self.primary_dir / "postgresql.conf", "a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in _SETTINGS.items())
        with open(self.primary_dir / "pg_hba.conf", "a") as hba:
            hba.write("host replication postgres 127.0.0.1/32 trust\n")
        self._pg_ctl_start(self.primary_dir, self.primary_port)
        self.started = True
        try:
            self._run(
                "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary_port),
                "-U", "postgres", "-D", str(self.replica_dir), "-R", "-X", "stream",
                "-c", "fast", "--no-sync",
            )  # fmt: skip
            self.replica_start()
        except Exception:
            self.stop()
            raise
        return self

    def replica_start(self) -> None:
        self._pg_ctl_start(self.replica_dir, self.replica_port)

    def replica_stop(self, mode: str = "fast") -> None:
        self._pg_ctl_stop(self.replica_dir, mode)

    def url(self, database: str = "postgres", *, replica: bool = False) -> str:
        port = self.replica_port if replica else self.primary_port
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"

    def database_create(self, name: str) -> None:
        """A database on the primary (the replica follows)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def replica_caught_up(self, timeout: float = 10.0) -> None:
        """Wait until the replica has replayed everything the primary has written now."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as primary:
            target = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.url(replica=True), autocommit=True) as replica:
            while True:
                (done,) = replica.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [str(target)]
                ).fetchone()
                if done:
                    return
                if time.monotonic() > deadline:
                    raise PostgresPairError(f"the replica did not replay {target} in {timeout}s")
                time.sleep(0.02)

    def stop(self) -> None:
        if self.started:
            self._pg_ctl_stop(self.replica_dir, "immediate")
            self._pg_ctl_stop(self.primary_dir, "immediate")
            self.started = False
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.root)

    def __enter__(self) -> "PostgresPair":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
