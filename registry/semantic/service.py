"""The embedding service: one process holding the model and the matrix of every agent's
vector (registry/semantic/index.py), answering the web workers over a Unix socket
(registry/semantic/client.py), on a connection each worker keeps (a thread each here).
The threads answer the requests from the matrix alone; one more thread follows the stored
vectors into it (``VectorIndex.watch``) on a connection it keeps, so a search never waits
on the database, nor fails while it is away."""

import base64
import contextlib
import json
import logging
import os
import socket
import socketserver
import threading
import uuid

from django.db import connections

from registry.semantic.client import MAX_LINE
from registry.semantic.embedder import embed_stored, model
from registry.semantic.index import WATCH_SECONDS, VectorIndex

log = logging.getLogger(__name__)


def answer(index: VectorIndex, request: dict) -> dict:
    op = request.get("op")
    if op == "embed":
        texts = request.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return {"error": "texts must be a list of strings"}
        return {"vectors": [base64.b64encode(v).decode() for v in embed_stored(texts)]}
    if op == "nearest":
        text, k, among = request.get("text"), request.get("k"), request.get("among")
        floor = request.get("floor", -1.0)
        if not isinstance(text, str) or not isinstance(k, int) or k < 1:
            return {"error": "nearest needs a text and k >= 1"}
        if not isinstance(floor, int | float):
            return {"error": "floor must be a number"}
        generation = request.get("generation")
        if generation is not None and type(generation) is not int:
            return {"error": "generation must be an integer"}
        packed = request.get("among_packed")
        if packed is not None:  # the agents' 16-byte ids, one after the other, in base64
            try:
                among = base64.b64decode(packed, validate=True)
            except (TypeError, ValueError):  # (binascii.Error is a ValueError)
                return {"error": "among_packed must be base64 text"}
        elif among is not None:
            among = [uuid.UUID(pk) for pk in among]
        found, held = index.search_dots(
            text,
            k,
            among,
            float(floor),
            generation,
            look=request.get("look", True) is not False,
            canonical=request.get("canonical") is True,
        )
        # The ids as one text and the scores as integers: a list of [id, cosine] pairs cost
        # the service three times as much to write and a worker twice as much to read.
        texts = found.texts
        return {
            "ids": ",".join([texts[row] for row in found.rows]),
            "dots": found.dots,
            "generation": held,
        }
    return {"error": f"unknown op {op!r}"}


def server_make(path: str, watch_seconds: float = WATCH_SECONDS) -> socketserver.BaseServer:
    """The service bound to the socket ``path``, its model loaded, its index read and
    followed every ``watch_seconds`` (until ``server_close``)."""
    index = VectorIndex()
    model()
    index.refresh()
    connections.close_all()
    log.info("semantic service: %d vectors, socket %s", len(index), path)

    class Handler(socketserver.StreamRequestHandler):
        def setup(self):
            super().setup()
            with kept_lock:
                kept.add(self.connection)

        def finish(self):
            with kept_lock:
                kept.discard(self.connection)
            super().finish()

        def handle(self):
            # A connection is kept by its worker: its requests, one line each, answered in
            # turn until it closes.
            while line := self.rfile.readline(MAX_LINE):
                try:
                    reply = answer(index, json.loads(line))
                except (ValueError, TypeError) as exc:
                    reply = {"error": str(exc)}
                except Exception as exc:  # the worker falls back; the service keeps serving
                    log.exception("semantic service request failed")
                    reply = {"error": type(exc).__name__}
                self.wfile.write(json.dumps(reply).encode() + b"\n")

    class Server(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True

        def server_close(self):
            stop.set()
            index.wake()
            watcher.join()
            super().server_close()
            with kept_lock:  # the workers' kept connections end with the service
                for conn in kept:
                    with contextlib.suppress(OSError):  # (closed by its worker meanwhile)
                        conn.shutdown(socket.SHUT_RDWR)

    kept: set = set()
    kept_lock = threading.Lock()
    stop = threading.Event()
    watcher = threading.Thread(
        target=index.watch, args=(stop, watch_seconds), name="semantic-watch", daemon=True
    )
    if os.path.exists(path):
        os.unlink(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    server = Server(path, Handler)
    server.index = index
    os.chmod(path, 0o600)
    watcher.start()
    return server


def serve(path: str) -> None:
    with server_make(path) as server:
        server.serve_forever()
