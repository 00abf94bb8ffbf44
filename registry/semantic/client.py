"""Embedding and nearest-neighbour search, asked of the embedding service
(``manage.py semantic_serve``) over its Unix socket when ``SEMANTIC_SOCKET`` is set, or
done in this process when it is not. Asking keeps the model, numpy and the matrix of
every vector out of the web workers.

The protocol is one JSON line each way per request: ``{"op": "embed", "texts": [...]}``
answers ``{"vectors": [base64, ...]}``; ``{"op": "nearest", "text": ..., "k": ...,
"floor": ..., "among": [id, ...] | null, "among_packed": base64, "generation": n,
"look": bool, "canonical": bool}`` (``among_packed``: the agents' 16-byte ids one after the
other; the data generation whose vectors the search must see, optional; ``look`` false:
search the vectors held, without looking for newer ones; ``canonical`` true: no copy of a
duplicate group among the hits) answers ``{"ids": "id,id,...", "dots": [n, ...],
"generation": n}``: the hits' ids, nearest first, and their byte dot products with the
query (a cosine is one over 127², ``embedder.cosine_of``), and the generation whose vectors it
saw, at least.

Each process (and thread) keeps one connection and sends its requests on it one after
another, each answer read before the next request is sent: a connection a request cost the
service 0.4-0.7 ms of CPU more per search (its accept and a thread each; bench/README.md,
"Run AA"). A connection whose answer was left unread (the caller raised between
``nearest_begin`` and ``result``) is dropped, and so is one a forked process inherited; a
kept connection that the service closed (it restarted) is opened again once."""

import base64
import json
import logging
import os
import socket
import threading
import time
import uuid

from django.conf import settings

from registry.http.metrics import semantic_duration
from registry.semantic.embedder import cosine_of

log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5.0
MAX_LINE = 64 << 20  # (the service's too)
# The operations a request's time is counted under (registry_semantic_request_duration_seconds).
OPERATIONS = {"embed": "embed", "nearest": "nearest"}


class SemanticUnavailable(Exception):
    """The embedding service did not answer."""


class _Link:
    """A connection to the service, kept by one process and thread."""

    def __init__(self, path: str):
        self.pid = os.getpid()
        self.path = path
        self.waiting = False  # a request sent whose answer is not read yet
        self.answered = False  # it has answered before: a close may be a restart since
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.settimeout(TIMEOUT_SECONDS)
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.reader = self.sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


_links = threading.local()


def _link_drop(link: "_Link") -> None:
    if getattr(_links, "link", None) is link:
        _links.link = None
    link.close()  # (a forked copy's close leaves the connection to the process it is of)


def _link() -> _Link:
    """This thread's kept connection, opened when it has none it can use."""
    link = getattr(_links, "link", None)
    path = settings.SEMANTIC_SOCKET
    if link is not None and (link.pid != os.getpid() or link.waiting or link.path != path):
        _link_drop(link)
        link = None
    if link is None:
        link = _links.link = _Link(path)
    return link


def _again(link: _Link, exc: OSError) -> bool:
    """Whether a request that failed on ``link`` is sent once more on a new connection:
    when the link had answered before (the service restarted since), not after a timeout."""
    return link.answered and not isinstance(exc, TimeoutError)


class _Asked:
    """A request sent on a kept connection, its answer not read yet."""

    def __init__(self, request: dict):
        self._op = OPERATIONS.get(request.get("op"), "other")
        self._started = time.perf_counter()
        self._data = json.dumps(request).encode() + b"\n"
        try:
            self._link = self._sent()
        except SemanticUnavailable:
            self._observe("unavailable")
            raise

    def _observe(self, outcome: str) -> None:
        semantic_duration.labels(self._op, outcome).observe(time.perf_counter() - self._started)

    def _sent(self) -> _Link:
        for attempt in (1, 2):
            try:
                link = _link()
            except OSError as exc:
                raise SemanticUnavailable(str(exc)) from exc
            try:
                link.sock.sendall(self._data)
            except OSError as exc:
                _link_drop(link)
                if attempt == 2 or not _again(link, exc):
                    raise SemanticUnavailable(str(exc)) from exc
                continue  # (the service restarted since its last answer: once more)
            link.waiting = True
            return link
        raise AssertionError("unreachable")

    def answer(self) -> dict:
        try:
            answer = self._answer()
        except SemanticUnavailable:
            self._observe("unavailable")
            raise
        self._observe("ok")
        return answer

    def _answer(self) -> dict:
        for attempt in (1, 2):
            link = self._link
            try:
                line = link.reader.readline(MAX_LINE)
                if not line.endswith(b"\n"):
                    raise ConnectionError("the embedding service closed the connection")
            except OSError as exc:
                _link_drop(link)
                if attempt == 2 or not _again(link, exc):
                    raise SemanticUnavailable(str(exc)) from exc
                self._link = self._sent()  # (it restarted since its last answer: once more)
                continue
            link.waiting, link.answered = False, True
            try:
                answer = json.loads(line)
            except ValueError as exc:
                raise SemanticUnavailable(str(exc)) from exc
            if "error" in answer:
                raise SemanticUnavailable(answer["error"])
            return answer
        raise AssertionError("unreachable")


def _ask(request: dict) -> dict:
    return _Asked(request).answer()


def warm() -> None:
    """Load the embedding model now if this process embeds (no service): before forking
    processes that will, so that they share it instead of each loading it."""
    if not settings.SEMANTIC_SOCKET:
        from registry.semantic.embedder import model

        model()


def embed(texts: list[str]) -> list[bytes]:
    """Each agent text's quantized vector, as stored (registry/semantic/embedder.py)."""
    if not texts:
        return []
    if not settings.SEMANTIC_SOCKET:
        from registry.semantic.embedder import embed_stored

        return embed_stored(texts)
    answer = _ask({"op": "embed", "texts": texts})
    return [base64.b64decode(v) for v in answer["vectors"]]


class Nearest:
    """A search by meaning asked of the service and not yet read (``nearest_begin``): the
    worker does its own work (a statement) while the service searches."""

    def __init__(self, request: dict, among: list | None):
        self._request, self._among = request, among
        self._asked, self._failed = None, None
        if settings.SEMANTIC_SOCKET:
            try:
                self._asked = _Asked(request)
            except SemanticUnavailable as exc:
                self._failed = exc

    def result(self, *, ids_as_text: bool = False) -> tuple[list[tuple], int]:
        """The hits, and the data generation whose vectors the service's matrix held; with
        ``ids_as_text`` each hit's id as the text the service sent (not parsed)."""
        request = self._request
        if not settings.SEMANTIC_SOCKET:
            from registry.semantic.index import local_index

            among = self._among
            if among is not None and not isinstance(among, bytes):
                among = [pk if isinstance(pk, uuid.UUID) else uuid.UUID(pk) for pk in among]
            # (Here a look is cheap, and asked for after the caller read its generation.)
            return local_index().search(
                request["text"],
                request["k"],
                among,
                request["floor"],
                request.get("generation"),
                ids_as_text=ids_as_text,
                canonical=request.get("canonical", False),
            )
        if self._asked is None:
            raise self._failed
        answer = self._asked.answer()
        try:
            ids = answer["ids"].split(",") if answer["ids"] else []
            if not ids_as_text:
                ids = [uuid.UUID(pk) for pk in ids]
            hits = [(pk, cosine_of(dot)) for pk, dot in zip(ids, answer["dots"], strict=True)]
            return hits, answer["generation"]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # (a service of another version, mid-deploy: the worker answers without it)
            message = f"the embedding service's answer is malformed: {exc!r}"
            raise SemanticUnavailable(message) from exc


def nearest_begin(
    text: str,
    k: int,
    among: list | None = None,
    floor: float = -1.0,
    generation: int | None = None,
    *,
    look: bool = True,
    canonical: bool = False,
) -> Nearest:
    """Ask for ``nearest``'s search now, read its answer later (``Nearest.result``). With
    ``look`` False the service searches the vectors it holds, without looking for newer
    ones: the answer's generation says which. ``canonical``: no copy of a duplicate group
    among the hits (the lean lane's collapsed queries)."""
    request = {"op": "nearest", "text": text, "k": k, "floor": floor, "among": None}
    if isinstance(among, bytes):  # 16 bytes an agent: sent as they are, in base64
        request["among_packed"] = base64.b64encode(among).decode()
    elif among is not None:
        request["among"] = [str(pk) for pk in among]
    if generation is not None:
        request["generation"] = generation
    if not look:
        request["look"] = False
    if canonical:
        request["canonical"] = True
    return Nearest(request, among)


def nearest(
    text: str,
    k: int,
    among: list | None = None,
    floor: float = -1.0,
    generation: int | None = None,
    *,
    ids_as_text: bool = False,
    canonical: bool = False,
) -> list[tuple]:
    """Up to ``k`` (agent id, cosine) pairs nearest to ``text`` with a cosine of ``floor``
    or more, among ``among`` if given, searched in vectors that hold every agent written
    by data generation ``generation`` (by now when None)."""
    asked = nearest_begin(text, k, among, floor, generation, canonical=canonical)
    return asked.result(ids_as_text=ids_as_text)[0]
