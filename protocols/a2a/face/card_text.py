"""A registration's card as the request's JSON text carried it: a2a-sdk reads a data part
into a protobuf ``Struct`` (members in its own order, every number a double, strings
unescaped), so the card is read again from the body, where the message's first data part
that is an object holds it (``params.message`` on JSON-RPC, ``message`` on HTTP+JSON)."""

import json
from collections.abc import Iterator
from json.decoder import scanstring

_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _members(text: str, at: int) -> Iterator[tuple[str, int, int]]:
    """Each member of the object at ``at``: its name and where its value starts and ends."""
    at = _skip(text, at)
    if text[at : at + 1] != "{":
        return
    at = _skip(text, at + 1)
    while text[at : at + 1] == '"':
        name, at = scanstring(text, at + 1)
        start = _skip(text, _skip(text, at) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, start)
        yield name, start, end
        at = _skip(text, end)
        at = _skip(text, at + 1) if text[at : at + 1] == "," else at


def _items(text: str, at: int) -> Iterator[tuple[int, int]]:
    """Where each item of the array at ``at`` starts and ends."""
    at = _skip(text, at)
    if text[at : at + 1] != "[":
        return
    at = _skip(text, at + 1)
    while at < len(text) and text[at] != "]":
        _, end = _DECODER.raw_decode(text, at)
        yield at, end
        at = _skip(text, end)
        at = _skip(text, at + 1) if text[at : at + 1] == "," else at


def _member(text: str, at: int, name: str) -> int | None:
    return next((start for key, start, _ in _members(text, at) if key == name), None)


def card_text(body: bytes) -> bytes | None:
    """The card's JSON text in a SendMessage request's body (JSON-RPC or HTTP+JSON), byte
    for byte, or None (no card there, or a body that is not such a request). The body was
    checked as strict JSON before (``registry.fastpath.bridge.json_body_problem``)."""
    try:
        text = body.decode("utf-8").removeprefix("\ufeff")
        params = _member(text, 0, "params")
        message = _member(text, params if params is not None else 0, "message")
        parts = _member(text, message, "parts") if message is not None else None
        for start, _ in _items(text, parts) if parts is not None else ():
            data = _member(text, start, "data")
            if data is not None and text[data] == "{":
                card = next((span for key, *span in _members(text, data) if key == "card"), None)
                return text[card[0] : card[1]].encode() if card else None
    except (ValueError, IndexError):
        return None
    return None
