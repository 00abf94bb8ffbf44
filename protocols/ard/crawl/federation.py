"""Federated search with the peer registries of ``ARD_PEERS`` (ARD §8).

``referrals``: the peers are returned as registry entries for the client to ask.
``auto``: every peer is asked (``federation: none``, so no search travels further) in
parallel under one overall deadline (``ARD_FEDERATION_DEADLINE``); answers are merged by
``identifier`` (the registry's own copy wins) and sorted by score, each keeping its
``source``. A peer that is slow, fails or answers nonsense never fails the search: it is
returned in ``referrals`` instead. Peers are asked for the first page only; the page token
pages the registry's own results.
"""

import time
from concurrent.futures import ThreadPoolExecutor, wait
from urllib.parse import urlsplit

from protocols.ard.catalog.conf import setting
from protocols.ard.catalog.entries import REGISTRY, URN
from registry.outbound.fetch import FetchError, fetch


def referral(peer: str) -> dict:
    host = urlsplit(peer).hostname or "peer"
    return {
        "identifier": f"urn:air:{host}:registry:ard",
        "displayName": f"ARD registry at {host}",
        "type": REGISTRY,
        "url": f"{peer.rstrip('/')}/search",
    }


def referrals(peers: list[str] | None = None) -> list[dict]:
    return [referral(peer) for peer in (setting("ARD_PEERS") if peers is None else peers)]


def _entry_shaped(item: object) -> bool:
    """A peer's result that keeps our answer valid against the official schema."""
    if not isinstance(item, dict) or not isinstance(item.get("identifier"), str):
        return False
    score = item.get("score")
    return (
        URN.match(item["identifier"]) is not None
        and isinstance(item.get("displayName"), str)
        and isinstance(item.get("type"), str)
        and isinstance(item.get("url"), str) != isinstance(item.get("data"), dict)
        and type(score) is int
        and 0 <= score <= 100
    )


def _peer_results(peer: str, query: dict, page_size: int, deadline: float) -> list[dict]:
    remaining = max(0.05, deadline - time.monotonic())
    body = {"query": query, "federation": "none", "pageSize": page_size}
    answer = fetch(f"{peer.rstrip('/')}/search", json_body=body, timeout=remaining).json()
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list):
        raise FetchError("invalid-answer", peer, f"{peer} answered without results[].")
    kept = [item for item in results if _entry_shaped(item)]
    for item in kept:
        if not isinstance(item.get("source"), str):
            item["source"] = peer
    return kept


def federated(own: list[dict], query: dict, page_size: int) -> tuple[list[dict], list[dict]]:
    """Our results merged with every peer's, and the referrals of the peers that did not
    answer in time or at all."""
    peers = setting("ARD_PEERS")
    if not peers:
        return own, []
    deadline = time.monotonic() + setting("ARD_FEDERATION_DEADLINE")
    pool = ThreadPoolExecutor(max_workers=len(peers), thread_name_prefix="ard-peer")
    try:
        futures = {
            pool.submit(_peer_results, peer, query, page_size, deadline): peer for peer in peers
        }
        done, _ = wait(futures, timeout=setting("ARD_FEDERATION_DEADLINE"))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    merged = {item["identifier"]: item for item in own}
    missed = []
    for future, peer in futures.items():
        if future not in done or future.exception() is not None:
            missed.append(peer)
            continue
        for item in future.result():
            merged.setdefault(item["identifier"], item)
    ranked = sorted(merged.values(), key=lambda item: -item["score"])  # stable: ours first
    return ranked[:page_size], referrals(missed)
