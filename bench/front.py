"""A round-robin front for several registry nodes, in the standard library: each request
goes to the next node, and to the one after when a node does not take the connection (a
node that stopped). A request a node took and then failed is answered 502, never sent
twice: only the client knows whether to try a write again. Streams are passed through as
they come. For the live cluster test and ``make cluster``; a deployment uses its load
balancer (docs/operations/scale.md).
"""

import http.client
import itertools
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
}


class Front:
    """Listens on 127.0.0.1:``port`` and spreads requests over ``nodes`` (ports)."""

    def __init__(self, port: int, nodes: list[int], timeout: float = 30.0):
        self.nodes = list(nodes)
        self.timeout = timeout
        self.turn = itertools.count()
        self.lock = threading.Lock()
        self.sent: dict[int, int] = dict.fromkeys(self.nodes, 0)
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                front.forward(self)

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> "Front":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
        with self.lock:
            first = next(self.turn)
        for attempt in range(len(self.nodes)):
            port = self.nodes[(first + attempt) % len(self.nodes)]
            upstream = http.client.HTTPConnection("127.0.0.1", port, timeout=self.timeout)
            try:
                upstream.connect()
            except OSError:
                upstream.close()
                continue  # the node does not take connections: the next one
            try:
                upstream.request(handler.command, handler.path, body=body, headers=headers)
                response = upstream.getresponse()
            except OSError:
                upstream.close()
                self._answer(handler, 502, b"the node failed the request")
                return
            with self.lock:
                self.sent[port] += 1
            self._relay(handler, response)
            upstream.close()
            return
        self._answer(handler, 503, b"no node takes connections")

    def _relay(self, handler, response) -> None:
        handler.send_response(response.status, response.reason)
        streamed = response.getheader("Content-Length") is None
        for name, value in response.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                handler.send_header(name, value)
        if streamed:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        if handler.command == "HEAD":
            return
        try:
            while chunk := response.read1(65536) if streamed else response.read():
                handler.wfile.write(chunk)
                handler.wfile.flush()
                if not streamed:
                    break
        except OSError:
            handler.close_connection = True

    @staticmethod
    def _answer(handler, status: int, text: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(len(text)))
        handler.end_headers()
        handler.wfile.write(text)
