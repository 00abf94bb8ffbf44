"""The change events' benchmark: ``python -m bench.events`` (README "Change events").

On a fresh bench database (PostgreSQL by default) it starts the stream server as the
Procfile does (uvicorn ``registry.events.asgi:application``), opens ``--streams`` concurrent
``GET /events`` streams from one asyncio client, then registers ``--writes`` agents one at
a time, ``--interval`` seconds apart, and records for each the time its write committed and
the time each stream received its ``agent.created``: commit-to-event latency, p50 and p95
over every (stream, event). It reads the stream server's resident memory before and with
the streams open. With ``--webhooks`` (a Redis broker: ``--broker``) it also starts a job
worker as the Procfile does, subscribes a local receiver (which answers the verification)
and reports commit-to-delivery latency the same way. With ``--liveness`` (20) endpoints'
graces run out (each 2 s after it was registered, a quarter of a second apart), with no
write: grace end to the stream's
``endpoint.liveness_changed`` (the stream server's expiry watcher), p50 and p95.
"""

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.database import database_reset
from bench.load import ROOT, database_migrate, django_start
from bench.server import port_free


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.events", description=__doc__)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_bench_events"
    )
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--webhooks", action="store_true")
    parser.add_argument(
        "--liveness",
        type=int,
        default=20,
        help="Endpoints whose grace runs out, to time grace end to liveness event (0: none).",
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--out", type=Path, default=None, help="Write the results as JSON.")
    return parser.parse_args(argv)


def say(message: str) -> None:
    print(f"[bench.events] {message}", file=sys.stderr, flush=True)


def port_wait(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the stream server exited")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.2)
    raise RuntimeError("the stream server did not start")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


class Streams:
    """``count`` SSE streams over raw asyncio connections; each received agent.created is
    recorded with its arrival time."""

    def __init__(self, port: int, count: int):
        self.port, self.count = port, count
        self.received: dict[str, list[float]] = {}
        self.open = 0
        self.error: BaseException | None = None

    async def one(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=2**20)
        writer.write(b"GET /events?events=agent.created HTTP/1.1\r\nHost: bench\r\n\r\n")
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"the stream answered {status!r}")
        self.open += 1
        while line := await reader.readline():
            if line.startswith(b"data: {"):  # chunked framing lines are skipped
                start = line.index(b'"subject":"') + 11
                subject = line[start : start + 36].decode()
                self.received.setdefault(subject, []).append(time.time())

    async def run(self, ready: threading.Event, stop: asyncio.Event) -> None:
        tasks = []
        for _ in range(self.count):
            tasks.append(asyncio.create_task(self.one()))
            if len(tasks) % 100 == 0:
                await asyncio.sleep(0.05)  # the listen backlog
        while self.open < self.count:
            failed = [t for t in tasks if t.done() and t.exception()]
            if failed:
                self.error = failed[0].exception()
                ready.set()
                return
            await asyncio.sleep(0.1)
        ready.set()
        await stop.wait()
        for task in tasks:
            task.cancel()


def receiver_start(received: dict) -> tuple[ThreadingHTTPServer, int]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = b"{}"
            if event["type"].endswith("webhook.verification"):
                answer = json.dumps({"challenge": event["data"]["challenge"]}).encode()
            else:
                received.setdefault(event.get("subject"), []).append(time.time())
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def writes(count: int, interval: float) -> dict[str, float]:
    from registry.agents.services import AgentInput, agent_create

    committed = {}
    for index in range(count):
        agent = agent_create(owner="bench", data=AgentInput(name=f"Event bench {index}"))
        committed[str(agent.pk)] = time.time()
        time.sleep(interval)
    return committed


def graces_end(count: int, ends: dict) -> None:
    """``count`` live endpoints, each with its grace ending 2 s after it was registered (no
    write when it ends: only the stream server's watcher notices); their end times go into
    ``ends``."""
    from datetime import timedelta

    from django.utils import timezone

    from registry.agents.models import Endpoint
    from registry.agents.services import AgentInput, EndpointInput, agent_create
    from registry.events.liveness import liveness_changes_write

    for index in range(count):
        endpoint = EndpointInput(
            name="web", transport="Http", protocol="A2A", address="https://a.example.com/"
        )
        agent = agent_create(
            owner="bench", data=AgentInput(name=f"Grace {index}", endpoints=[endpoint])
        )
        end = timezone.now() + timedelta(seconds=2)
        pk = agent.endpoints.get().pk
        Endpoint.objects.filter(pk=pk).update(alive_until=end, last_alive_at=timezone.now())
        liveness_changes_write([pk])  # announced live, as a heartbeat would have
        ends[str(pk)] = end.timestamp()
        time.sleep(0.25)


async def liveness_read(port: int, count: int, received: dict, connected) -> None:
    """One stream of endpoint.liveness_changed: when each endpoint's stale event came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**20)
    query = b"GET /events?events=endpoint.liveness_changed HTTP/1.1\r\nHost: bench\r\n\r\n"
    writer.write(query)
    await writer.drain()
    if b" 200 " not in await reader.readline():
        raise RuntimeError("the liveness stream was refused")
    connected.set()
    while len(received) < count and (line := await reader.readline()):
        if line.startswith(b"data: {") and b'"liveness":"stale"' in line:
            event = json.loads(line[6:])
            received[event["endpointid"]] = time.time()
    writer.close()


def latencies(committed: dict[str, float], received: dict[str, list[float]]) -> list[float]:
    return [at - committed[s] for s, times in received.items() if s in committed for at in times]


def main(argv=None) -> int:
    args = options(argv)
    say("database")
    database_reset(args.database_url)
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "CELERY_BROKER_URL": args.broker if args.webhooks else "",
        "FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "FETCH_ALLOW_HTTP_HOSTS": "127.0.0.1",
        # Every stream comes from this one client: its cap must hold them all.
        "EVENTS_STREAMS_PER_CLIENT": str(args.streams + 10),
    }
    os.environ.update({k: v for k, v in env.items() if k != "CELERY_BROKER_URL" or v})
    django_start(args.database_url)
    database_migrate()
    port = port_free()
    bin_dir = Path(sys.executable).parent
    processes = [
        subprocess.Popen(
            [
                str(bin_dir / "uvicorn"),
                "registry.events.asgi:application",
                "--port",
                str(port),
                "--no-access-log",
                "--no-proxy-headers",
                "--log-level",
                "warning",
                "--backlog",
                "4096",
                "--timeout-graceful-shutdown",
                "2",
            ],
            cwd=ROOT,
            env={**env, **os.environ},
        )
    ]
    results: dict = {"streams": args.streams, "writes": args.writes}
    try:
        port_wait(port, processes[0])
        say("stream server started")
        results["stream_server_rss_mib_idle"] = rss_mib(processes[0].pid)
        webhook_received: dict = {}
        if args.webhooks:
            processes.append(
                subprocess.Popen(
                    [
                        str(bin_dir / "celery"),
                        "-A",
                        "registry",
                        "worker",
                        "--pool=solo",
                        "--loglevel=WARNING",
                    ],
                    cwd=ROOT,
                    env={**env, **os.environ},
                )
            )
            _server, hook_port = receiver_start(webhook_received)
            from registry.events.models import Subscription
            from registry.events.subscriptions import subscription_create

            subscription_create(  # (the receiver does not check signatures)
                owner="bench", url=f"http://127.0.0.1:{hook_port}/hook", events=[], filter={}
            )
            say("subscribed; waiting for the worker's verification")
            deadline = time.time() + 60
            while not Subscription.objects.filter(status="active").exists():
                if time.time() > deadline:
                    raise RuntimeError("the job worker did not verify the receiver")
                time.sleep(0.5)
        streams = Streams(port, args.streams)
        ready, loop = threading.Event(), asyncio.new_event_loop()
        stop = asyncio.Event()
        thread = threading.Thread(
            target=loop.run_until_complete, args=(streams.run(ready, stop),), daemon=True
        )
        started = time.time()
        say(f"opening {args.streams} streams")
        thread.start()
        if not ready.wait(300) or streams.error:
            raise RuntimeError(f"{streams.open} of {args.streams} streams opened: {streams.error}")
        results["streams_open_seconds"] = round(time.time() - started, 1)
        results["stream_server_rss_mib_streaming"] = rss_mib(processes[0].pid)
        say(f"{streams.open} streams open; writing")
        committed = writes(args.writes, args.interval)
        time.sleep(5)
        loop.call_soon_threadsafe(stop.set)
        results["stream_server_rss_mib_after_writes"] = rss_mib(processes[0].pid)
        results["commit_to_event"] = percentiles(latencies(committed, streams.received))
        results["events_expected"] = args.streams * args.writes
        if args.webhooks:
            results["commit_to_webhook"] = percentiles(latencies(committed, webhook_received))
            results["webhooks_expected"] = args.writes
        if args.liveness:
            say(f"{args.liveness} graces running out")
            ends: dict = {}
            stale: dict = {}
            connected = threading.Event()

            def read() -> None:
                with contextlib.suppress(TimeoutError):
                    asyncio.run(
                        asyncio.wait_for(
                            liveness_read(port, args.liveness, stale, connected),
                            30 + args.liveness,
                        )
                    )

            reading = threading.Thread(target=read, daemon=True)
            reading.start()
            connected.wait(30)
            graces_end(args.liveness, ends)
            reading.join(30 + args.liveness)
            results["grace_end_to_event"] = percentiles(
                [stale[pk] - ends[pk] for pk in stale if pk in ends]
            )
            results["graces_expected"] = args.liveness
        results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
    print(json.dumps(results, indent=1))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
