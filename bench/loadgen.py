"""Load generators: wrk when it is installed, else closed-loop Python clients in processes.

Also the sequential client used for discovery queries. Only the standard library here: the
Python generator's processes are spawned and import this module alone.
"""

import http.client
import itertools
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"

WRK_SCRIPT = r"""
-- Each thread reads the request paths from the file named after "--" and picks at random;
-- with "in-order <n>" after the file (n: the threads), thread k sends lines k, k + n,
-- k + 2n, ... (so no line is sent twice while the lines last). A line is a path (a GET),
-- "POST <path>" (an empty POST) or "POST <path> <body>".
local paths = {}
local methods = {}
local bodies = {}
local counter = 0
local in_order = false
local next_line = 0
local step = 1

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then
      local method, path, body = line:match("^(%u+) (%S+) ?(.*)$")
      -- Indexed by the line's number: a nil stored at #bodies + 1 adds no entry, and the
      -- bodies after it would go with the wrong lines.
      local n = #paths + 1
      paths[n] = path or line
      methods[n] = method or "GET"
      if body ~= nil and body ~= "" then bodies[n] = body end
    end
  end
  math.randomseed(id * 7919 + os.time())
  in_order = args[2] == "in-order"
  step = tonumber(args[3] or "1")
  next_line = id
end

function request()
  local i
  if in_order then
    i = (next_line - 1) % #paths + 1
    next_line = next_line + step
  else
    i = math.random(#paths)
  end
  return wrk.format(methods[i], paths[i], nil, bodies[i])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_JSON {\"requests\": %d, \"duration_us\": %d, \"p50_us\": %d, \"p99_us\": %d, " ..
    "\"max_us\": %d, \"connect_errors\": %d, \"read_errors\": %d, \"write_errors\": %d, " ..
    "\"timeouts\": %d, \"status_errors\": %d}\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.timeout, e.status))
end
"""


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass
class Throughput:
    generator: str
    connections: int
    seconds: float
    requests: int
    errors: int
    p50_ms: float
    p99_ms: float
    requests_per_second: float = field(init=False)

    def __post_init__(self):
        self.requests_per_second = round(self.requests / self.seconds, 1) if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def wrk_path() -> str | None:
    return shutil.which("wrk")


def wrk_version() -> str:
    # wrk -v prints its version and usage, and exits non-zero.
    run = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    found = re.search(r"wrk \S*?(\d+\.\d+\.\d+)", run.stdout + run.stderr)
    return f"wrk {found.group(1)}" if found else "wrk"


def request_line(line: str) -> tuple[str, str, str | None]:
    """A paths-file line: ``/path`` (a GET), ``POST /path`` or ``POST /path <body>``."""
    method, _, rest = line.partition(" ")
    if not rest:
        return "GET", line, None
    path, _, body = rest.partition(" ")
    return method, path, body or None


def throughput_wrk(
    *,
    port: int,
    paths_file: Path,
    duration: float,
    connections: int,
    workdir: Path,
    headers: dict[str, str] | None = None,
    in_order: bool = False,
) -> Throughput:
    """``in_order``: the lines in their order, each sent once while they last (the
    threads take turns), instead of at random."""
    script = workdir / "bench.lua"
    script.write_text(WRK_SCRIPT)
    threads = max(1, min(connections, os.cpu_count() or 1))
    command = [
        "wrk",
        f"--threads={threads}",
        f"--connections={connections}",
        f"--duration={max(1, round(duration))}s",
        "--timeout=30s",
        "--latency",
        f"--script={script}",
        *(f"--header={name}: {value}" for name, value in (headers or {}).items()),
        f"http://{HOST}:{port}",
        "--",
        str(paths_file),
        *(["in-order", str(threads)] if in_order else []),
    ]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    found = re.search(r"^BENCH_JSON (.*)$", run.stdout, re.MULTILINE)
    if run.returncode != 0 or not found:
        raise RuntimeError(f"wrk failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    data = json.loads(found.group(1))
    errors = sum(
        data[k]
        for k in ("connect_errors", "read_errors", "write_errors", "timeouts", "status_errors")
    )
    return Throughput(
        generator="wrk",
        connections=connections,
        seconds=round(data["duration_us"] / 1e6, 3),
        requests=data["requests"],
        errors=errors,
        p50_ms=round(data["p50_us"] / 1000, 3),
        p99_ms=round(data["p99_us"] / 1000, 3),
    )


def _client_thread(
    port: int,
    paths: list[str],
    deadline: float,
    seed: int,
    latencies: list,
    errors: list,
    headers: dict[str, str],
    turns=None,
    addresses=(),
) -> None:
    """``turns``: a counter the process's threads share, to send ``paths`` in order, each
    once while they last; None: at random. ``addresses``: client addresses to connect from,
    a random one for each connection (the server sees that many clients)."""
    rng = random.Random(seed)
    connection = http.client.HTTPConnection(HOST, port, timeout=30)
    failed = 0
    while time.monotonic() < deadline:
        n = next(turns) % len(paths) if turns is not None else rng.randrange(len(paths))
        method, path, body = request_line(paths[n])
        if addresses and connection.sock is None:
            connection.source_address = (addresses[rng.randrange(len(addresses))], 0)
        began = time.perf_counter()
        try:
            # gunicorn's sync workers close after each answer; http.client reconnects.
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            ok = 200 <= response.status < 300
        except (OSError, http.client.HTTPException):
            connection.close()
            ok = False
        latencies.append(time.perf_counter() - began)
        failed += not ok
    connection.close()
    errors.append(failed)


def _client_process(
    port: int,
    paths: list[str],
    duration: float,
    threads: int,
    seed: int,
    barrier,
    results,
    headers: dict[str, str],
    in_order: bool = False,
    addresses: tuple[str, ...] = (),
) -> None:
    latencies: list[float] = []
    errors: list[int] = []
    turns = itertools.count() if in_order else None  # next() on it is atomic under the GIL
    barrier.wait()
    began = time.monotonic()
    workers = [
        threading.Thread(
            target=_client_thread,
            args=(
                port,
                paths,
                began + duration,
                seed * 1000 + n,
                latencies,
                errors,
                headers,
                turns,
                addresses,
            ),
        )
        for n in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put((latencies, sum(errors), time.monotonic() - began))


def throughput_python(
    *,
    port: int,
    paths: list[str],
    duration: float,
    connections: int,
    seed: int = 1,
    headers: dict[str, str] | None = None,
    in_order: bool = False,
    addresses: tuple[str, ...] = (),
) -> Throughput:
    """Closed loop: `connections` clients, each sending its next request on an answer.
    ``in_order``: each path once while they last (each process its share), not at random.
    ``addresses``: the client addresses the connections come from (default: one)."""
    context = multiprocessing.get_context("spawn")
    processes = max(1, min(connections, os.cpu_count() or 1))
    shares = [connections // processes + (n < connections % processes) for n in range(processes)]
    barrier = context.Barrier(processes)
    results = context.Queue()
    children = [
        context.Process(
            target=_client_process,
            args=(
                port,
                paths[n::processes] if in_order else paths,
                duration,
                share,
                seed + n,
                barrier,
                results,
                headers or {},
                in_order,
                tuple(addresses),
            ),
            daemon=True,
        )
        for n, share in enumerate(shares)
    ]
    for child in children:
        child.start()
    gathered = [results.get(timeout=duration + 120) for _ in children]
    for child in children:
        child.join()
    latencies = sorted(lat for part in gathered for lat in part[0])
    seconds = max(part[2] for part in gathered)
    return Throughput(
        generator="python",
        connections=connections,
        seconds=round(seconds, 3),
        requests=len(latencies),
        errors=sum(part[1] for part in gathered),
        p50_ms=round(percentile(latencies, 50) * 1000, 3),
        p99_ms=round(percentile(latencies, 99) * 1000, 3),
    )


@dataclass
class Answer:
    status: int
    seconds: float
    body: bytes


def requests_sequential(port: int, paths: list[str]) -> list[Answer]:
    """One client, one request at a time: the latency a single user sees."""
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    answers = []
    try:
        for path in paths:
            began = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            answers.append(Answer(response.status, time.perf_counter() - began, body))
    finally:
        connection.close()
    return answers


def generator_choice(choice: str) -> str:
    """The load generator of ``--generator``: wrk, python, or auto (wrk when installed)."""
    if choice == "wrk" and not wrk_path():
        from bench.database import BenchError

        raise BenchError("--generator wrk: wrk is not on PATH")
    if choice == "auto":
        return "wrk" if wrk_path() else "python"
    return choice
