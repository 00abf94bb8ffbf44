"""The benchmark's wrk generator (bench.loadgen.throughput_wrk), against a local server that
records what it is sent: every row of the benchmark goes through this one function when wrk
drives it (bench.throughput._runner), and the Python generator's run of the whole benchmark
is tests/test_bench_smoke.py. Skipped where wrk is not installed; CI installs it."""

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench import loadgen

pytestmark = [
    # Nothing here reads the suite's database: CI's PostgreSQL pass leaves it out (.ci/run).
    pytest.mark.database_independent,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed"),
]


class Recorder(BaseHTTPRequestHandler):
    """200 for every path but /missing (a 404); each request kept as (method, path, body,
    the X-Bench header)."""

    seen: list[tuple[str, str, str, str | None]] = []
    lock = threading.Lock()

    def answer(self, body: str) -> None:
        with self.lock:
            self.seen.append((self.command, self.path, body, self.headers.get("X-Bench")))
        status = 404 if self.path == "/missing" else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_GET(self):
        self.answer("")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.answer(self.rfile.read(length).decode())

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder():
    Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def run(recorder, tmp_path, lines, **options):
    paths = tmp_path / "paths.txt"
    paths.write_text("\n".join(lines) + "\n")
    return loadgen.throughput_wrk(
        port=recorder.server_address[1],
        paths_file=paths,
        duration=1,
        connections=2,
        workdir=tmp_path,
        **options,
    )


def test_wrk_sends_the_files_gets_and_posts_with_their_bodies_and_headers(recorder, tmp_path):
    lines = ["/a2a/agents/1", "/healthz", 'POST /agents/1/heartbeat {"status":"up"}', "POST /ping"]
    result = run(recorder, tmp_path, lines, headers={"X-Bench": "key-1"})

    assert result.generator == "wrk" and result.connections == 2
    assert result.requests > 0 and result.errors == 0
    assert 0.5 < result.seconds < 5 and result.requests_per_second > 0
    assert result.p99_ms >= result.p50_ms > 0
    sent = {(method, path, body) for method, path, body, _ in Recorder.seen}
    assert sent == {
        ("GET", "/a2a/agents/1", ""),
        ("GET", "/healthz", ""),
        ("POST", "/agents/1/heartbeat", '{"status":"up"}'),
        ("POST", "/ping", ""),
    }
    assert {header for *_, header in Recorder.seen} == {"key-1"}


def test_in_order_sends_each_line_once_while_the_lines_last(recorder, tmp_path):
    lines = [f"POST /beat/{n}" for n in range(200_000)]
    result = run(recorder, tmp_path, lines, in_order=True)

    paths = [path for _, path, _, _ in Recorder.seen]
    assert result.requests > 0 and len(paths) == len(set(paths))  # none sent twice


def test_answers_that_are_not_2xx_are_counted_as_errors(recorder, tmp_path):
    result = run(recorder, tmp_path, ["/missing"])

    assert result.requests > 0 and result.errors == result.requests
