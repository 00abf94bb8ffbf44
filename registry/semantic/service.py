"""The embedding service: one process holding the model and the matrix of every agent's
vector (registry/semantic/index.py), answering the web workers over a Unix socket
(registry/semantic/client.py). Threads answer the requests; the matrix has its lock."""

import base64
import json
import logging
import os
import socketserver
import uuid

from django.db import connections

from registry.semantic.embedder import embed_quantized, model
from registry.semantic.index import VectorIndex

log = logging.getLogger(__name__)
MAX_LINE = 64 << 20


def answer(index: VectorIndex, request: dict) -> dict:
    op = request.get("op")
    if op == "embed":
        texts = request.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return {"error": "texts must be a list of strings"}
        return {"vectors": [base64.b64encode(v).decode() for v in embed_quantized(texts)]}
    if op == "nearest":
        text, k, among = request.get("text"), request.get("k"), request.get("among")
        floor = request.get("floor", -1.0)
        if not isinstance(text, str) or not isinstance(k, int) or k < 1:
            return {"error": "nearest needs a text and k >= 1"}
        if not isinstance(floor, int | float):
            return {"error": "floor must be a number"}
        if among is not None:
            among = [uuid.UUID(pk) for pk in among]
        hits = index.nearest(text, k, among, float(floor))
        return {"hits": [[str(pk), score] for pk, score in hits]}
    return {"error": f"unknown op {op!r}"}


def server_make(path: str) -> socketserver.ThreadingUnixStreamServer:
    """The service bound to the socket ``path``, its model loaded and index read."""
    index = VectorIndex()
    model()
    index.refresh()
    connections.close_all()
    log.info("semantic service: %d vectors, socket %s", len(index), path)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            line = self.rfile.readline(MAX_LINE)
            try:
                reply = answer(index, json.loads(line))
            except (ValueError, TypeError) as exc:
                reply = {"error": str(exc)}
            except Exception as exc:  # the worker falls back; the service keeps serving
                log.exception("semantic service request failed")
                reply = {"error": type(exc).__name__}
            finally:
                connections.close_all()  # this thread's, which ends with the request
            self.wfile.write(json.dumps(reply).encode() + b"\n")

    class Server(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True

    if os.path.exists(path):
        os.unlink(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    server = Server(path, Handler)
    os.chmod(path, 0o600)
    return server


def serve(path: str) -> None:
    with server_make(path) as server:
        server.serve_forever()
