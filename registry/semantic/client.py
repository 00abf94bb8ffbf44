"""Embedding and nearest-neighbour search, asked of the embedding service
(``manage.py semantic_serve``) over its Unix socket when ``SEMANTIC_SOCKET`` is set, or
done in this process when it is not. Asking keeps the model, numpy and the matrix of
every vector out of the web workers.

The protocol is one JSON line each way per request: ``{"op": "embed", "texts": [...]}``
answers ``{"vectors": [base64, ...]}``; ``{"op": "nearest", "text": ..., "k": ...,
"floor": ..., "among": [id, ...] | null}`` answers ``{"hits": [[id, cosine], ...]}``."""

import base64
import json
import logging
import socket
import uuid

from django.conf import settings

log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 5.0


class SemanticUnavailable(Exception):
    """The embedding service did not answer."""


def _ask(request: dict) -> dict:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(TIMEOUT_SECONDS)
            conn.connect(settings.SEMANTIC_SOCKET)
            conn.sendall(json.dumps(request).encode() + b"\n")
            chunks = []
            while not chunks or not chunks[-1].endswith(b"\n"):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError) as exc:
        raise SemanticUnavailable(str(exc)) from exc
    if "error" in answer:
        raise SemanticUnavailable(answer["error"])
    return answer


def embed(texts: list[str]) -> list[bytes]:
    """Each text's quantized vector (registry/semantic/embedder.py)."""
    if not texts:
        return []
    if not settings.SEMANTIC_SOCKET:
        from registry.semantic.embedder import embed_quantized

        return embed_quantized(texts)
    answer = _ask({"op": "embed", "texts": texts})
    return [base64.b64decode(v) for v in answer["vectors"]]


def nearest(
    text: str, k: int, among: list | None = None, floor: float = -1.0
) -> list[tuple[uuid.UUID, float]]:
    """Up to ``k`` (agent id, cosine) pairs nearest to ``text`` with a cosine of ``floor``
    or more, among ``among`` if given."""
    if not settings.SEMANTIC_SOCKET:
        from registry.semantic.index import local_index

        return local_index().nearest(text, k, among, floor)
    answer = _ask(
        {
            "op": "nearest",
            "text": text,
            "k": k,
            "floor": floor,
            "among": None if among is None else [str(pk) for pk in among],
        }
    )
    return [(uuid.UUID(pk), score) for pk, score in answer["hits"]]
