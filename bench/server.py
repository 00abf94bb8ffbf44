"""The production server under test: gunicorn with two sync workers and, as ``make serve``
runs them (Procfile.serve), the embedding service beside them (``manage.py
semantic_serve``: the model and the matrix of every vector, asked by the workers over its
Unix socket), started and stopped here."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.database import BenchError
from bench.load import BASE_URL, ROOT

WORKERS = 2
# As make serve runs it (Makefile): sync workers; see bench/README.md for the choice.
WORKER_CLASS = "sync"
# Settings that would change what is measured are set here, whatever the caller's shell has.
_REGISTRY_VARIABLES = (
    "DATABASE_URL",
    "REGISTRY_BASE_URL",
    "REDIS_URL",
    "DEBUG",
    "DB_CONN_MAX_AGE",
    "DB_CONN_HEALTH_CHECKS",
    "DB_PREPARE_THRESHOLD",
    "SEMANTIC_SOCKET",
)


def port_free() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """gunicorn serving ``app``: the registry, or the bare WSGI application (bench.bare)
    that is the limit the registry is compared with, with the same workers."""

    def __init__(
        self,
        *,
        port: int,
        database_url: str,
        redis_url: str,
        log_path: Path,
        app: str = "registry.wsgi",
    ):
        self.app = app
        self.port = port
        self.database_url = database_url
        self.redis_url = redis_url
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.semantic: subprocess.Popen | None = None
        self.semantic_socket = str(log_path.parent / f"semantic-{port}.sock")

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _REGISTRY_VARIABLES}
        env.update(
            DATABASE_URL=self.database_url,
            DEBUG="0",
            REGISTRY_BASE_URL=BASE_URL,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            RATE_LIMIT_READ="100000000/sec",
            RATE_LIMIT_WRITE="100000000/sec",
            RATE_LIMIT_HEARTBEAT="100000000/sec",
            RATE_LIMIT_FETCH="100000000/sec",
            RATE_LIMIT_FETCH_ANON="100000000/sec",
            SECRET_KEY="bench",
            LOG_LEVEL="WARNING",
            # The pages' static files, collected for this run (whitenoise's manifest).
            STATIC_ROOT=str(self.log_path.parent / "static"),
        )
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        if self.runs_semantic():
            env["SEMANTIC_SOCKET"] = self.semantic_socket
        return env

    def runs_semantic(self) -> bool:
        """The registry's search by meaning is asked of its own service, as make serve
        runs it (the bare application has none)."""
        return self.app == "registry.wsgi"

    def semantic_start(self, log, deadline: float) -> None:
        """``manage.py semantic_serve``, ready once its socket exists (model and index
        loaded)."""
        if os.path.exists(self.semantic_socket):
            os.unlink(self.semantic_socket)
        self.semantic = subprocess.Popen(
            [sys.executable, "manage.py", "semantic_serve", "--socket", self.semantic_socket],
            cwd=ROOT,
            env=self.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        while not os.path.exists(self.semantic_socket):
            if self.semantic.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise BenchError(f"the embedding service did not start:\n{self.log()}")
            time.sleep(0.2)

    # What start's errors call the process.
    label = "gunicorn"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "gunicorn",
            self.app,
            "--workers",
            str(WORKERS),
            "--worker-class",
            WORKER_CLASS,
            "--bind",
            f"127.0.0.1:{self.port}",
            "--log-level",
            "warning",
        ]

    def collects_static(self) -> bool:
        """As deployed (make serve): the pages need the static files' manifest."""
        return self.app == "registry.wsgi"

    # The embedding service, collectstatic and two workers took 83 s on a 2-core machine
    # running other loads (load average 12): 60 s was too short there.
    def start(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        with open(self.log_path, "ab") as log:
            if self.runs_semantic():
                self.semantic_start(log, deadline)
            if self.collects_static():
                subprocess.run(
                    [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
                    cwd=ROOT,
                    env=self.environment(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=True,
                )
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise BenchError(f"{self.label} exited with {code}:\n{self.log()}")
            if self._healthy():
                return
            time.sleep(0.2)
        self.stop()
        raise BenchError(
            f"{self.label} did not answer /healthz within {timeout:.0f}s:\n{self.log()}"
        )

    def _healthy(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def stop(self, timeout: float = 30.0) -> None:
        """TERM the master (it stops its workers) and the embedding service; KILL the
        session each leads if it lingers."""
        for process in (self.process, self.semantic):
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def workers_rss_mib(self) -> list[float]:
        """The resident memory of each worker (the master's children), in MiB."""
        if self.process is None:
            return []
        sizes = []
        for child in Path(f"/proc/{self.process.pid}/task").glob("*/children"):
            for pid in child.read_text().split():
                size = _rss_mib(pid)
                if size is not None:
                    sizes.append(size)
        return sizes

    def semantic_rss_mib(self) -> float | None:
        """The embedding service's resident memory (the model and the matrix), in MiB."""
        return None if self.semantic is None else _rss_mib(str(self.semantic.pid))

    def log(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _rss_mib(pid: str) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None
