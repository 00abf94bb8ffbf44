"""A real webhook receiver for the tests: an HTTPS server (the test CA) that verifies each
request's Standard Webhooks signature with the standardwebhooks library, answers the
verification handshake (or refuses it), and answers deliveries with the statuses given."""

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Receiver:
    def __init__(self, context: ssl.SSLContext):
        self.secret: str | None = None
        self.answer_challenge = True
        self.statuses: list[int] = []  # answers to the next deliveries, then 200
        self.received: list[dict] = []  # verified deliveries: headers and event
        self.verifications = 0
        self.bad_signatures = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.handle(self, body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"https://localhost:{self.port}{path}"

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        event = json.loads(body)
        with self.lock:
            if self.secret is not None:
                try:
                    Webhook(self.secret).verify(body, dict(handler.headers.items()))
                except WebhookVerificationError:
                    self.bad_signatures += 1
                    self._answer(handler, 400, b"{}")
                    return
            if event["type"] == "org.a2a-registry.webhook.verification":
                self.verifications += 1
                challenge = event["data"]["challenge"] if self.answer_challenge else "no"
                self._answer(handler, 200, json.dumps({"challenge": challenge}).encode())
                return
            self.received.append({"headers": dict(handler.headers.items()), "event": event})
            status = self.statuses.pop(0) if self.statuses else 200
        self._answer(handler, status, b"{}")

    @staticmethod
    def _answer(handler, status: int, body: bytes) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
