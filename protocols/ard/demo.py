"""The ARD app has no demo agents of its own: its catalog lists the other apps' demo agents,
built as they are written. What it offers the demo is a catalog to crawl: the document a
publisher would serve for the given cards (used by the docs' walk-through and the tests'
test sites)."""

from protocols.ard.catalog.entries import A2A_CARD, digest, dumps


def publisher_catalog(host: str, cards: dict[str, bytes], base_url: str) -> bytes:
    """A publisher's ``ai-catalog.json`` listing each card (``name`` → served bytes) at
    ``<base_url>/<name>.json`` with its digest."""
    entries = [
        {
            "identifier": f"urn:air:{host}:a2a:{name}",
            "displayName": name,
            "type": A2A_CARD,
            "url": f"{base_url}/{name}.json",
            "digest": digest(body),
        }
        for name, body in cards.items()
    ]
    return dumps({"specVersion": "1.0", "host": {"displayName": host}, "entries": entries})
