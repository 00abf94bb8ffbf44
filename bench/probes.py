"""What the probe job and the trust scores cost at scale: ``python -m bench.probes``
(``--agents``, 100,000 by default, one https endpoint each, on a fresh bench database).

Every endpoint points at one local HTTPS server (a test CA of the run's own; the safe
fetcher allows localhost for the run). The program runs the probe job
(``endpoints_probe_due``) ``--runs`` times, ``PROBE_BATCH`` = ``--batch`` endpoints a run,
``PROBE_CONCURRENCY`` = ``--concurrency`` at a time, each run ending with the trust scores
of the agents it probed (``probes_written``): probes per second. Then the daily job
(``trust_refresh_all``) over every agent: agents per second. It reports the projection of a
whole sweep of ``--agents`` endpoints at the measured rate.
"""

import argparse
import json
import os
import ssl
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.database import database_reset
from bench.load import database_migrate, django_start


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.probes", description=__doc__)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/registry_bench_probes"
    )
    parser.add_argument("--agents", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    return parser.parse_args(argv)


def say(message: str) -> None:
    print(f"[bench.probes] {message}", file=sys.stderr, flush=True)


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        return None


def server_start(folder: Path) -> tuple[ThreadingHTTPServer, Path]:
    """A local HTTPS server answering every GET with ``{}``, and its CA's PEM file."""
    import trustme

    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    bundle = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, bundle


def endpoints_load(count: int, address: str) -> None:
    """``count`` agents with one Persistent https endpoint each, due now, in bulk."""
    from registry.agents.models import Agent, Endpoint

    for start in range(0, count, 5000):
        size = min(5000, count - start)
        agents = [
            Agent(id=uuid.uuid4(), name=f"Probed {start + i}", owner="bench", source="native")
            for i in range(size)
        ]
        Agent.objects.bulk_create(agents)
        Endpoint.objects.bulk_create(
            Endpoint(
                id=uuid.uuid4(),
                agent=agent,
                name="web",
                transport="Http",
                protocol="Generic",
                address=address,
                liveness_grace=timedelta(minutes=10),
            )
            for agent in agents
        )


def main(argv=None) -> int:
    args = options(argv)
    with tempfile.TemporaryDirectory(prefix="registry-bench-probes-") as folder:
        server, bundle = server_start(Path(folder))
        os.environ["FETCH_CA_BUNDLE"] = str(bundle)
        os.environ["FETCH_ALLOWED_HOSTS"] = "localhost"
        os.environ["PROBE_BATCH"] = str(args.batch)
        os.environ["PROBE_CONCURRENCY"] = str(args.concurrency)
        database_reset(args.database_url)
        django_start(args.database_url)
        database_migrate()
        from registry.liveness.probes import endpoints_probe_due
        from registry.trust.services import trust_refresh_all

        say(f"loading {args.agents} agents")
        endpoints_load(args.agents, f"https://localhost:{server.server_address[1]}/")
        rates = []
        for run in range(args.runs):
            began = time.perf_counter()
            probed = endpoints_probe_due()
            seconds = time.perf_counter() - began
            rates.append(probed / seconds)
            say(f"run {run + 1}: {probed} probes in {seconds:.2f} s")
        began = time.perf_counter()
        measured, changed = trust_refresh_all()
        refresh = time.perf_counter() - began
        server.shutdown()
    rate = statistics.median(rates)
    results = {
        "agents": args.agents,
        "batch": args.batch,
        "concurrency": args.concurrency,
        "probes_per_second": round(rate, 1),
        "sweep_projected_seconds": round(args.agents / rate, 1),
        "trust_refresh": {
            "agents": measured,
            "changed": changed,
            "seconds": round(refresh, 2),
            "agents_per_second": round(measured / refresh, 1),
        },
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
