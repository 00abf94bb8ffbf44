"""Several registry nodes on one primary and its streaming replica, behind one address:
``python -m bench.cluster`` (``make cluster``) and the live multi-node test.

A PostgreSQL primary and replica of their own (``bench.pgpair``), then NODES registry
nodes, each with its own web server (gunicorn), event stream server (uvicorn), embedding
service and var folder, all on the primary (``DATABASE_URL``) and the replica
(``DATABASE_REPLICA_URLS``), one Redis (the shared cache and the job broker) and the same
secret key; with ``beats`` each runs a job scheduler too (exactly one sends the jobs:
``registry.celery.LeaderScheduler``), with ``webhooks`` a webhook worker, with ``relay``
the queue relay's reply consumer (``manage.py relay_consume``: every node's on one reply
queue of the run's own on RabbitMQ, ``QUEUE_RELAY_BROKER_URL``). A round-robin front
(``bench.front``) listens on one port for them all. The Redis database it is given is
emptied first.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import redis

from bench.front import Front
from bench.pgpair import PostgresPair
from bench.server import port_free

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "registry_cluster"
SECRET_KEY = "cluster-secret-key-shared-by-every-node"
# The settings' default QUEUE_RELAY_BROKER_URL (the local RabbitMQ).
RELAY_BROKER_URL = "amqp://guest:guest@127.0.0.1:5672//"
# The variables of the caller's shell that would change what the nodes are.
_CLEARED = (
    "DATABASE_URL",
    "DATABASE_REPLICA_URLS",
    "REDIS_URL",
    "REGISTRY_VAR_DIR",
    "SEMANTIC_SOCKET",
    "EVENTS_STREAM_URL",
    "PROMETHEUS_MULTIPROC_DIR",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
)


class ClusterError(RuntimeError):
    """A part of the cluster did not start (the message has its log)."""


class Node:
    """One registry node: its processes, ports and var folder."""

    def __init__(
        self,
        name: str,
        root: Path,
        environment: dict[str, str],
        beat: bool,
        webhooks: bool,
        relay: bool = False,
    ):
        self.name = name
        self.webhooks = webhooks
        self.relay = relay
        self.var = root / name
        self.var.mkdir(parents=True, exist_ok=True)
        self.port = port_free()
        self.events_port = port_free()
        self.beat = beat
        self.environment = {
            **environment,
            "REGISTRY_VAR_DIR": str(self.var),
            "SEMANTIC_SOCKET": str(self.var / "semantic.sock"),
        }
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.events_port}"

    def _spawn(self, label: str, command: list[str]) -> None:
        log = open(self.var / f"{label}.log", "ab")  # noqa: SIM115 (the process keeps it)
        self.processes[label] = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def commands(self) -> dict[str, list[str]]:
        """The node's processes, by label."""
        python = sys.executable
        commands = {
            "semantic": [python, "manage.py", "semantic_serve"],
            "web": [
                python, "-m", "gunicorn", "registry.wsgi", "--workers", "2", "--preload",
                "--graceful-timeout", "2", "--bind", f"127.0.0.1:{self.port}",
                "--log-level", "warning",
            ],
            "events": [
                python, "-m", "uvicorn", "registry.events.asgi:application", "--host",
                "127.0.0.1", "--port", str(self.events_port), "--no-access-log",
                "--no-proxy-headers", "--timeout-graceful-shutdown", "2", "--log-level",
                "warning",
            ],
        }  # fmt: skip
        if self.beat:
            commands["beat"] = [python, "-m", "celery", "-A", "registry", "beat", "-l", "INFO"]
        if self.webhooks:
            commands["webhooks"] = [
                python, "-m", "celery", "-A", "registry", "worker", "-Q", "webhooks",
                "-n", f"webhooks-{self.name}@%h", "--pool=threads", "--concurrency=2",
                "-l", "WARNING",
            ]  # fmt: skip
        if self.relay:
            commands["relay"] = [python, "manage.py", "relay_consume"]
        return commands

    def start(self) -> None:
        for label, command in self.commands().items():
            self._spawn(label, command)

    def restart(self, label: str) -> None:
        """Start the process ``label`` again (after ``kill(label)``)."""
        self._spawn(label, self.commands()[label])

    def ready(self) -> bool:
        for label, process in self.processes.items():
            if process.poll() is not None:
                raise ClusterError(f"{self.name}'s {label} exited:\n{self.log(label)}")
        if not (self.var / "semantic.sock").exists():
            return False
        return _answers(f"{self.url}/healthz") and _answers(f"{self.events_url}/healthz")

    def log(self, label: str) -> str:
        path = self.var / f"{label}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def kill(self, label: str | None = None) -> None:
        """SIGKILL the process ``label`` (every process of the node by default), as a
        machine that dies: nothing is finished or flushed."""
        for name, process in self.processes.items():
            if (label is None or name == label) and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def stop(self, grace: float = 3.0) -> None:
        """TERM every process; KILL what still runs after ``grace`` seconds."""
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _answers(url: str) -> bool:
    # Stream servers answer /healthz with a 404 problem: any HTTP answer means it listens.
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status < 500
    except urllib.error.HTTPError as error:
        return error.code < 500
    except OSError:
        return False


class Cluster:
    """``start()``: the pair, the schema, the nodes and the front; ``stop()`` ends all."""

    def __init__(
        self,
        *,
        nodes: int = 2,
        redis_url: str = "redis://127.0.0.1:6379/9",
        beats: bool = False,
        webhooks: bool = False,
        relay: bool = False,
        front_port: int = 0,
        directory: str | None = None,
        extra_environment: dict[str, str] | None = None,
    ):
        self.root = Path(directory or tempfile.mkdtemp(prefix="registry-cluster-"))
        self.root.chmod(0o755)  # PostgreSQL's user keeps its folders inside
        self.pair = PostgresPair(port_free(), port_free(), str(self.root / "postgres"))
        self.redis_url = redis_url
        self.front_port = front_port or port_free()
        self.base_url = f"http://127.0.0.1:{self.front_port}"
        self.count = nodes
        self.beats = beats
        self.webhooks = webhooks
        self.relay = relay
        # The relay's queues of this run alone (RabbitMQ is shared with other runs).
        run = uuid.uuid4().hex[:12]
        self.reply_queue = f"cluster.{run}.replies"
        self.dead_letter_queue = f"cluster.{run}.dead"
        self.extra = extra_environment or {}
        self.nodes: list[Node] = []
        self.front: Front | None = None
        self.admin_key = ""

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
        env.update(
            DATABASE_URL=self.pair.url(DATABASE),
            DATABASE_REPLICA_URLS=self.pair.url(DATABASE, replica=True),
            REDIS_URL=self.redis_url,
            DEBUG="0",
            SECRET_KEY=SECRET_KEY,
            REGISTRY_BASE_URL=self.base_url,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # The front passes the client's X-Forwarded-For on: the callers it names are
            # told apart (read-your-writes, rate limits) as behind a real balancer.
            TRUSTED_PROXY_COUNT="1",
            RATE_LIMIT_READ="100000/sec",
            RATE_LIMIT_WRITE="100000/sec",
            LOG_LEVEL="WARNING",
            DATABASE_REPLICA_CHECK_SECONDS="0.2",
            # One broker for every node's jobs (the webhooks' workers take turns on it).
            CELERY_BROKER_URL=self.redis_url,
            QUEUE_RELAY_REPLY_QUEUE=self.reply_queue,
            QUEUE_RELAY_DEAD_LETTER_QUEUE=self.dead_letter_queue,
            **self.extra,
        )
        return env

    def _manage_started(self, *arguments: str) -> subprocess.Popen:
        env = {**self.environment(), "REGISTRY_VAR_DIR": str(self.root / "manage")}
        return subprocess.Popen(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def manage(self, *arguments: str) -> str:
        """``manage.py`` on the cluster's database; its output."""
        process = self._manage_started(*arguments)
        out, err = process.communicate(timeout=120)
        if process.returncode != 0:
            raise ClusterError(f"manage.py {' '.join(arguments)}:\n{err[-4000:]}")
        return out

    def start(self, timeout: float = 60.0) -> "Cluster":
        deadline = time.monotonic() + timeout
        try:
            # The shared cache of another run would hold pages of another database (whose
            # data generations this one counts again from the start).
            redis.Redis.from_url(self.redis_url).flushdb()
            self.pair.start()
            self.pair.database_create(DATABASE)
            self.manage("migrate", "--noinput", "--verbosity", "0")
            env = self.environment()
            for number in range(1, self.count + 1):
                node = Node(
                    f"node{number}",
                    self.root,
                    env,
                    beat=self.beats,
                    webhooks=self.webhooks,
                    relay=self.relay,
                )
                self.nodes.append(node)
                node.start()
            # An admin key, made while the nodes start.
            keyed = self._manage_started("create_api_key", "--owner", "admin", "--admin")
            while not all(node.ready() for node in self.nodes):
                if time.monotonic() > deadline:
                    logs = "\n".join(f"{n.name}: {n.log('web')}" for n in self.nodes)
                    raise ClusterError(f"the nodes did not answer in {timeout:.0f}s:\n{logs}")
                time.sleep(0.1)
            out, err = keyed.communicate(timeout=max(1.0, deadline - time.monotonic()))
            if keyed.returncode != 0:
                raise ClusterError(f"manage.py create_api_key:\n{err[-4000:]}")
            self.admin_key = out.strip()
            self.front = Front(self.front_port, [node.port for node in self.nodes]).start()
            self.pair.replica_caught_up()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.front is not None:
            self.front.stop()
            self.front = None
        for node in self.nodes:
            node.stop()
        if self.relay:
            self.relay_queues_delete()
        self.pair.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def relay_queues_delete(self) -> None:
        """The run's reply and dead-letter queues, gone from the broker."""
        import kombu

        url = self.environment().get("QUEUE_RELAY_BROKER_URL") or RELAY_BROKER_URL
        try:
            with kombu.Connection(url, connect_timeout=3) as conn:
                for name in (self.reply_queue, self.dead_letter_queue):
                    channel = conn.channel()
                    channel.queue_delete(queue=name)
                    channel.close()
        except Exception as exc:  # the broker gone: nothing of the run's to delete there
            print(f"The relay's queues were not deleted: {type(exc).__name__}", file=sys.stderr)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cluster", description=__doc__)
    parser.add_argument("--nodes", type=int, default=2, help="registry nodes (default 2)")
    parser.add_argument("--port", type=int, default=8000, help="the front's port")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument(
        "--no-relay", action="store_true", help="no queue relay consumers (no RabbitMQ at hand)"
    )
    args = parser.parse_args(argv)
    cluster = Cluster(
        nodes=args.nodes,
        redis_url=args.redis_url,
        beats=True,
        webhooks=True,
        relay=not args.no_relay,
        front_port=args.port,
    )
    cluster.start(timeout=120)
    print(f"The registry: {cluster.base_url} (round robin over {args.nodes} nodes)")
    for node in cluster.nodes:
        print(f"  {node.name}: {node.url}, events {node.events_url}, var {node.var}")
    print(f"  primary {cluster.pair.url(DATABASE)}")
    print(f"  replica {cluster.pair.url(DATABASE, replica=True)}")
    if cluster.relay:
        print(f"  relay replies on the queue {cluster.reply_queue}")
    print(f"An admin API key: {cluster.admin_key}")
    print("Ctrl-C stops it all and removes its folders.")
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
