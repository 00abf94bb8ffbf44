"""Words of an entity for /v1/resolve: folded (lower case, accents dropped) so that "cafe"
finds "Café", with a weight per field: the name counts most."""

import re
import unicodedata
from collections.abc import Iterable

_WORD = re.compile(r"\w+", re.UNICODE)
TERM_MAX_CHARS = 100
QUERY_MAX_WORDS = 8
CAPABILITY_PREFIX = "cap:"
# How much a query word found in each field counts; confidence divides by the best case.
NAME_WEIGHT = 3
PLACE_WEIGHT = 2  # category, city
TEXT_WEIGHT = 1  # description, domain


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    return [w[:TERM_MAX_CHARS] for w in _WORD.findall(fold(text))]


def query_words(text: str) -> list[str]:
    return list(dict.fromkeys(words(text)))[:QUERY_MAX_WORDS]


def entity_terms(
    *,
    name: str,
    category: str,
    city: str,
    description: str,
    domain: str,
    capabilities: Iterable[str],
) -> dict[str, int]:
    """term -> weight (the best field it appears in); capabilities as cap:<name>, weight 0."""
    weights: dict[str, int] = {}
    for text, weight in (
        (description, TEXT_WEIGHT),
        # The domain's labels but its last (com, fr …: they would match nearly everything).
        (" ".join(domain.split(".")[:-1]), TEXT_WEIGHT),
        (category.replace("_", " "), PLACE_WEIGHT),
        (category, PLACE_WEIGHT),
        (city, PLACE_WEIGHT),
        (name, NAME_WEIGHT),
    ):
        for word in words(text):
            weights[word] = max(weights.get(word, 0), weight)
    for capability in capabilities:
        weights[capability_term(capability)] = 0
    return weights


def capability_term(name: str) -> str:
    return (CAPABILITY_PREFIX + name.casefold())[:TERM_MAX_CHARS]
