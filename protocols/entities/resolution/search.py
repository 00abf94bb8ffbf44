"""``/v1/resolve``'s text search in the three modes of discovery (``mode``,
registry/discovery/hybrid.py): ``keyword``, the entities' word index alone
(``registration.selectors.entities_resolve``); ``semantic``, the entities nearest the query
by meaning among those the filters keep; ``hybrid`` (the default), the two orders fused as
discovery fuses them (the entities with the query's words first, unless one found by
meaning alone is strongly near). An entity's confidence is the weight of the query's words
it has over the most they can weigh (1.0: every word in its name), or its cosine with the
query, whichever is higher."""

from protocols.entities.registration import selectors
from protocols.entities.registration.selectors import Resolved
from registry.discovery import hybrid
from registry.discovery.generation import generation_read
from registry.semantic import client


def entities_search(
    *,
    mode: str,
    query: str,
    location: str = "",
    capabilities: list[str] | None = None,
    min_verification: int = 0,
    limit: int = 20,
    open_now: bool = False,
) -> list[Resolved]:
    """The entities that answer ``query`` in ``mode`` (one of ``hybrid.MODES``), best first."""
    filters = {
        "location": location,
        "capabilities": capabilities or [],
        "min_verification": min_verification,
    }
    if mode == "keyword":
        return selectors.entities_resolve(query=query, limit=limit, open_now=open_now, **filters)
    confidence: dict = {}
    if mode == "hybrid":
        found = selectors.entities_resolve(query=query, limit=hybrid.DEPTH, **filters)
        confidence = {resolved.entity.pk: resolved.confidence for resolved in found}
    keyword = list(confidence)
    entities = selectors.entities_filtered(**filters)
    try:
        semantic = hybrid.semantic_ranked(
            entities, query, filtered=True, generation=generation_read()
        )
    except client.SemanticUnavailable as exc:
        semantic = hybrid.semantic_unavailable(mode, exc)
    for pk, cosine in semantic:
        confidence[pk] = max(confidence.get(pk, 0.0), round(max(0.0, min(1.0, cosine)), 3))
    if mode == "semantic":
        ranked = [pk for pk, _ in semantic]
    else:
        ranked = [pk for pk, _ in hybrid.fuse(keyword, semantic)]
    if open_now:  # (it takes and gives (rank, id) pairs)
        ranked = [pk for _, pk in selectors.entities_open_only(list(enumerate(ranked)))]
    ranked = ranked[:limit]
    entities_by_id = selectors.entity_queryset().in_bulk(ranked)
    return [Resolved(entities_by_id[pk], confidence[pk]) for pk in ranked if pk in entities_by_id]
