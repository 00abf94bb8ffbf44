"""Local HTTP(S) servers for testing outbound fetches, trusted through a trustme CA.

Use the fixtures from a test module with::

    pytest_plugins = ["tests.https_server"]

``https_server.route("/card", 200, {"Content-Type": "application/json"}, b"{}")``
serves a route; ``https_server.url("/card")`` is its address on ``localhost``. A route may
also be a function of the ``ReceivedRequest`` that returns its ``Route`` (whatever the
query string).
The server counts the connections it accepted and records every request.
"""

import socket
import ssl
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import trustme

# Host names besides localhost, for fetches of several domains (the entity-card tests point
# them at 127.0.0.1 with the ``local_names`` fixture).
TEST_NAMES = (
    "lepetitzinc.fr",
    "mybusiness.com",
    "dockai.co",
    "acme-bistro.com",
    "cafedeflore.fr",
    "other.example",
)
CERT_HOSTS = ("localhost", "127.0.0.1", "::1", *TEST_NAMES)


@dataclass(frozen=True)
class Route:
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    # Seconds to wait before answering.
    delay: float = 0.0
    # Seconds between body bytes; implies close_delimited.
    drip: float = 0.0
    # Send no Content-Length: the body ends when the connection closes.
    close_delimited: bool = False
    # Seconds between header lines, sent without end (for a minute at most): a server that
    # answers slowly enough that no single read times out.
    trickle: float = 0.0


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes = b""


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        received = ReceivedRequest("POST", self.path, dict(self.headers.items()), body)
        self.server.record(received)
        self._answer(self._route("POST "), received)

    def do_GET(self) -> None:
        received = ReceivedRequest("GET", self.path, dict(self.headers.items()))
        self.server.record(received)
        self._answer(self._route(""), received)

    def _route(self, method: str) -> "Route | tuple | None":
        route = self.server.routes.get(method + self.path)
        if route is None:  # a route answering by code answers whatever its query
            route = self.server.routes.get(method + self.path.partition("?")[0])
            route = route if callable(route) else None
        return route

    def _answer(self, route: "Route | tuple | None", received: "ReceivedRequest") -> None:
        if callable(route):  # a route that answers by code (an authorization endpoint)
            route = route(received)
        route = route or Route(404, {}, b"not found")
        if isinstance(route, tuple):
            route = Route(*route)
        if route.delay and self.server.stopping.wait(route.delay):
            return
        if route.trickle:
            self._trickle(route.trickle)
            return
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        streamed = route.close_delimited or route.drip
        if not streamed and "content-length" not in {name.lower() for name in route.headers}:
            self.send_header("Content-Length", str(len(route.body)))
        self.end_headers()
        try:
            if not route.drip:
                self.wfile.write(route.body)
                return
            for index in range(len(route.body)):
                self.wfile.write(route.body[index : index + 1])
                self.wfile.flush()
                if self.server.stopping.wait(route.drip):
                    return
        except OSError:
            pass  # the client gave up, which is what several tests want

    def _trickle(self, pause: float) -> None:
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for line in range(int(60 / pause)):
                self.wfile.write(f"X-Line-{line}: trickled\r\n".encode())
                self.wfile.flush()
                if self.server.stopping.wait(pause):
                    return
        except OSError:
            pass  # the client gave up: what the tests want

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, ssl_context: ssl.SSLContext | None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ssl_context = ssl_context
        self.routes: dict[str, Route | tuple] = {}
        self.connections = 0
        self.requests: list[ReceivedRequest] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def get_request(self) -> tuple[socket.socket, object]:
        connection, address = super().get_request()
        with self._lock:
            self.connections += 1
        return connection, address

    def finish_request(self, request, client_address) -> None:
        # The TLS handshake runs here, in the connection's thread, so a client
        # that never completes it cannot stall the accept loop.
        request.settimeout(10)
        if self.ssl_context is not None:
            try:
                request = self.ssl_context.wrap_socket(request, server_side=True)
            except OSError:
                return
        try:
            super().finish_request(request, client_address)
        finally:
            request.close()


class LocalServer:
    """A threaded HTTP server on 127.0.0.1, with TLS when given a server context."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None):
        self._server = _Server(ssl_context)
        self.scheme = "https" if ssl_context else "http"
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def routes(self) -> dict[str, Route | tuple]:
        """path -> Route or (status, headers, body)."""
        return self._server.routes

    @property
    def connections(self) -> int:
        return self._server.connections

    @property
    def requests(self) -> list[ReceivedRequest]:
        return list(self._server.requests)

    def route(
        self,
        path: str,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        **options: object,
    ) -> None:
        self.routes[path] = Route(status, dict(headers or {}), body, **options)

    def json(self, path: str, body: bytes, status: int = 200) -> None:
        self.route(path, status, {"Content-Type": "application/json"}, body)

    def json_post(self, path: str, body: bytes, status: int = 200) -> None:
        """The answer to a POST to ``path`` (GETs of it are answered by ``json``/``route``)."""
        self.route(f"POST {path}", status, {"Content-Type": "application/json"}, body)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.route(path, status, {"Location": location})

    def url(self, path: str = "/", host: str = "localhost") -> str:
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}{path}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class TCPListener:
    """A bare TCP listener on 127.0.0.1 that only counts connections.

    The kernel completes a handshake whether or not anyone calls accept(), so
    ``connections`` drains the backlog when read instead of racing a thread.
    """

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.setblocking(False)
        self.port = self._socket.getsockname()[1]
        self._accepted = 0

    @property
    def connections(self) -> int:
        while True:
            try:
                connection, _ = self._socket.accept()
            except BlockingIOError:
                return self._accepted
            self._accepted += 1
            connection.close()

    def close(self) -> None:
        self._socket.close()


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def tls_server_context(tls_ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert(*CERT_HOSTS).configure_cert(context)
    return context


@pytest.fixture
def ca_bundle(tls_ca: trustme.CA, tmp_path: Path) -> Path:
    """A PEM file holding the test CA, for clients that take a CA bundle path."""
    path = tmp_path / "test-ca.pem"
    tls_ca.cert_pem.write_to_path(str(path))
    return path


@pytest.fixture
def https_server(tls_server_context: ssl.SSLContext) -> Iterator[LocalServer]:
    server = LocalServer(tls_server_context)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def local_names(monkeypatch) -> tuple[str, ...]:
    """The TEST_NAMES resolve to 127.0.0.1 for the safe fetcher (the system resolver knows
    none of them); every other name resolves as usual."""
    from registry.outbound import deadlines

    real = deadlines.getaddrinfo

    def getaddrinfo(host: str, port: int, deadline: float):
        if host in TEST_NAMES:
            return real("127.0.0.1", port, deadline)
        return real(host, port, deadline)

    monkeypatch.setattr(deadlines, "getaddrinfo", getaddrinfo)
    return TEST_NAMES


@pytest.fixture
def http_server() -> Iterator[LocalServer]:
    server = LocalServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def tcp_listener() -> Iterator[TCPListener]:
    listener = TCPListener()
    yield listener
    listener.close()
