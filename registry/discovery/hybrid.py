"""Text search by meaning and by keyword together (``mode``): the relevance order of a text
query in ``semantic`` mode (the agents whose embedded text is nearest the query's,
registry/semantic/) or ``hybrid`` mode (the keyword order and the semantic order fused by
reciprocal rank), over exactly the agents the query's filters select. ``keyword`` is the
full-text search alone (registry/discovery/search.py), unchanged.

Each order contributes its first ``DEPTH`` agents; the fused list is paged by an offset
cursor. An agent's score is its fused score over the best a fused score can be (first in
both orders), or in ``semantic`` mode its cosine, both as 0 to 100."""

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable

from django.db.models import QuerySet

from registry.discovery.generation import generation_read
from registry.discovery.pagination import Page
from registry.http.params import bad_parameter
from registry.http.problems import ProblemError
from registry.semantic import client

log = logging.getLogger(__name__)
MODES = ("hybrid", "semantic", "keyword")
DEFAULT_MODE = "hybrid"
# Candidates from each order, and the reciprocal rank fusion constant (Cormack et al.).
DEPTH = 100
RRF_K = 60
# Semantic candidates of a query with filters: the nearest NEAREST_ALL of all, then those
# the filters keep; when fewer than DEPTH, the nearest among the filtered agents (up to
# NEAREST_AMONG of them), or of more, the nearest of all again, WIDER times as many at a
# time, until DEPTH are kept or none is left above the floor.
NEAREST_ALL = 1000
NEAREST_AMONG = 50_000
WIDER = 8
# Below this cosine an agent is not near the query at all; nor, for a query of one word,
# below ONE_WORD_COSINE: a word the model does not know is the mean of its pieces, near many
# agents by chance (0.2 to 0.27 on bench/semantic_set.json's made-up words, where every
# one-word query's answer was at 0.53 or more; a higher floor for more words cost the
# paraphrases their answers: bench/RESULTS.md, "Search by meaning").
MIN_COSINE = 0.15
ONE_WORD_COSINE = 0.4
WORD = re.compile(r"\w+")
# From this cosine on, an agent found by meaning alone ranks among those whose text has
# the query's words; below it, after them.
STRONG_COSINE = 0.5


def min_cosine(text: str) -> float:
    """The floor of the cosines of the agents near ``text``."""
    return ONE_WORD_COSINE if len(WORD.findall(text)) <= 1 else MIN_COSINE


def semantic_wanted(filtered: bool) -> int:
    # Without filters only deleted or retired agents drop out: fewer candidates suffice.
    return NEAREST_ALL if filtered else 2 * DEPTH


def nearest_kept(
    text: str, kept_of: Callable[[list], set], wanted: int, generation: int, **kwargs
) -> list[tuple]:
    """The first DEPTH of the nearest agents to ``text`` that ``kept_of`` keeps (it answers
    the ids it keeps of the hits it is given), asked for ``wanted`` at a time and more
    until DEPTH are kept or no agent is left above the floor: a filter never empties a
    page that has agents near the query, however many are nearer without it."""
    while True:
        hits = client.nearest(text, wanted, None, min_cosine(text), generation, **kwargs)
        kept = kept_of(hits)
        ranked = [hit for hit in hits if hit[0] in kept][:DEPTH]
        if len(ranked) >= DEPTH or len(hits) < wanted:
            return ranked
        wanted *= WIDER


def _filtered_ids(queryset: QuerySet, most: int) -> list | None:
    """The ids of ``queryset``'s agents, or None when there are more than ``most``."""
    ids = list(
        queryset.select_related(None)
        .prefetch_related(None)
        .order_by()
        .values_list("pk", flat=True)[: most + 1]
    )
    return ids if len(ids) <= most else None


def semantic_ranked(
    queryset: QuerySet, text: str, *, filtered: bool, generation: int
) -> list[tuple]:
    """Up to DEPTH (agent id, cosine) of ``queryset``'s agents nearest ``text``, searched
    among the vectors of data generation ``generation``. With filters: the
    agents nearest of all that the filters keep, and when fewer than DEPTH of those (and
    agents are left), the nearest among the filtered agents, or of more than NEAREST_AMONG,
    the nearest of all again, more of them (``nearest_kept``): either way the DEPTH nearest
    of the filtered agents."""
    floor = min_cosine(text)

    def kept_of(hits: list) -> set:
        ids = [pk for pk, _ in hits]
        kept = set()
        for start in range(0, len(ids), NEAREST_ALL):  # (SQLite's bound parameters)
            chunk = ids[start : start + NEAREST_ALL]
            kept.update(queryset.filter(pk__in=chunk).values_list("pk", flat=True))
        return kept

    wanted = semantic_wanted(filtered)
    hits = client.nearest(text, wanted, None, floor, generation)
    kept = kept_of(hits)
    ranked = [hit for hit in hits if hit[0] in kept][:DEPTH]
    if not filtered or len(ranked) >= DEPTH or len(hits) < wanted:
        return ranked
    among = _filtered_ids(queryset, NEAREST_AMONG)
    if among is not None:
        return client.nearest(text, DEPTH, among, floor, generation)
    return nearest_kept(text, kept_of, wanted * WIDER, generation)


def fused(
    queryset: QuerySet,
    text: str,
    mode: str,
    keyword_ranked: Callable[[], list],
    *,
    filtered: bool,
    generation: int | None = None,
) -> list[tuple]:
    """The whole relevance order of ``mode``: (agent id, score 0-100), best first, from
    the vectors of data generation ``generation`` (read here when not given)."""
    if generation is None:
        generation = generation_read()
    try:
        semantic = semantic_ranked(queryset, text, filtered=filtered, generation=generation)
    except client.SemanticUnavailable as exc:
        semantic = semantic_unavailable(mode, exc)
    if mode == "semantic":
        return [(pk, round(max(0.0, min(1.0, cosine)) * 100, 2)) for pk, cosine in semantic]
    return fuse(keyword_ranked(), semantic)


def semantic_unavailable(mode: str, exc: Exception) -> list:
    """The semantic order when the service does not answer: none (the keyword order alone),
    or in ``semantic`` mode a 503."""
    if mode == "semantic":
        raise ProblemError(
            503, "semantic-unavailable", "Search by meaning is unavailable; try mode=keyword."
        ) from exc
    log.warning("search by meaning unavailable, keyword order alone: %s", exc)
    return []


def fuse(keyword: list, semantic: list[tuple]) -> list[tuple]:
    """The keyword order's ids and the semantic order's (id, cosine) by reciprocal rank:
    (agent id, score 0-100), best first. The agents found by meaning alone, unless nearer
    than STRONG_COSINE, come after those whose text has the query's words, scored no more
    than the last of those."""
    scores: dict = {}
    places: dict = {}
    for order, ranked in enumerate((keyword, [pk for pk, _ in semantic])):
        for rank, pk in enumerate(ranked, start=1):
            scores[pk] = scores.get(pk, 0.0) + 1.0 / (RRF_K + rank)
            places.setdefault(pk, [DEPTH + 1, DEPTH + 1])[order] = rank
    first = set(keyword) | {pk for pk, cosine in semantic if cosine >= STRONG_COSINE}
    best = 2.0 / (RRF_K + 1)
    order = sorted(scores, key=lambda pk: (pk not in first, -scores[pk], places[pk], str(pk)))
    fused, ceiling = [], 100.0
    for pk in order:
        ceiling = min(ceiling, round(scores[pk] / best * 100, 2))
        fused.append((pk, ceiling))
    return fused


def _cursor(mode: str, offset: int) -> str:
    raw = json.dumps(["fused", mode, offset], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _offset(cursor: str | None, mode: str) -> int:
    if not cursor:
        return 0
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        kind, cursor_mode, offset = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise bad_parameter("cursor", "is not valid: use the next link as given") from None
    if kind != "fused" or type(offset) is not int or offset < 0:
        raise bad_parameter("cursor", "is not valid: use the next link as given")
    if cursor_mode != mode:
        raise bad_parameter("cursor", f"belongs to another mode ({cursor_mode})")
    return offset


def fused_page(
    queryset: QuerySet,
    text: str,
    mode: str,
    keyword_ranked: Callable[[], list],
    *,
    limit: int,
    cursor: str | None,
    filtered: bool,
) -> Page:
    """A page of the fused order (its ids, and their scores in ``Page.scores``)."""
    start = _offset(cursor, mode)
    # Read before the search: a write meanwhile makes the page's cache entry refused.
    generation = generation_read()
    ranked = fused(queryset, text, mode, keyword_ranked, filtered=filtered, generation=generation)
    return ranked_page(ranked, mode, start, limit, generation)


def ranked_page(ranked: list[tuple], mode: str, start: int, limit: int, generation: int) -> Page:
    """The page of ``ranked`` (the fused order) from ``start``."""
    chosen = ranked[start : start + limit]
    more = len(ranked) > start + limit
    return Page(
        [pk for pk, _ in chosen],
        _cursor(mode, start + limit) if more else None,
        generation if chosen else None,
        [score for _, score in chosen],
    )
