"""One ARD search, from its parsed request to the answer's bytes: the registry's own results
(``selectors.search``) with their score and source, then federation as the request asks.
``POST /ard/search`` answers these bytes (on the lean lane too, ``protocols.ard.search.lean``); the
A2A and
MCP wrappers (``protocols.ard.search.skills``) read them."""

import json

from protocols.ard.catalog.entries import ard_base, dumps
from protocols.ard.catalog.query import SearchRequest
from protocols.ard.crawl.federation import federated, referrals
from protocols.ard.search import selectors


def search_body(wanted: SearchRequest, query: dict) -> bytes:
    """``query``: the request's query object as sent (what peers are asked)."""
    found, following = selectors.search(wanted.query, wanted.page_size, wanted.page_token)
    return answer_body(wanted, query, found, following)


def asks_peers(wanted: SearchRequest) -> bool:
    """Whether this search asks the peer registries (federation ``auto``, first page)."""
    return wanted.federation == "auto" and not wanted.page_token and bool(referrals())


def answer_body(
    wanted: SearchRequest, query: dict, found: list[tuple[bytes, int]], following: str | None
) -> bytes:
    source = dumps(ard_base())
    results = [
        body[:-1] + b',"score":' + str(score).encode() + b',"source":' + source + b"}"
        for body, score in found
    ]
    tail: dict = {}
    if wanted.federation == "referrals" and not wanted.page_token:
        tail["referrals"] = referrals()
    elif asks_peers(wanted):
        merged, missed = federated([json.loads(r) for r in results], query, wanted.page_size)
        results = [dumps(item) for item in merged]
        if missed:
            tail["referrals"] = missed
    if following:
        tail["pageToken"] = following
    rest = b"," + dumps(tail)[1:] if tail else b"}"
    return b'{"results":[' + b",".join(results) + b"]" + rest
