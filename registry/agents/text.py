"""The agent's text as search reads it, built at write time (registry.agents.services):
the words searched (``AgentSearchText.text``) and the exact keys the PostgreSQL index holds
beside them (``AgentSearchText.keys``). Discovery's queries (registry.discovery.search) use
the same words and keys."""

import re

MAX_TERMS = 8
_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def search_terms(text: str) -> list[str]:
    return _words(text)[:MAX_TERMS]


# The longest search word: far below PostgreSQL's 2 KB for a tsquery word, which a longer
# one would make a database error; no word of a name, description or tag is as long.
SEARCH_WORD_MAX_CHARS = 100


def search_words_problem(text: str) -> str | None:
    """Why ``text`` cannot be searched for (a word too long), or None."""
    if any(len(word) > SEARCH_WORD_MAX_CHARS for word in _WORD.findall(text or "")):
        most = SEARCH_WORD_MAX_CHARS
        return f"has a word longer than {most} characters, the most a search word may have"
    return None


# The text searched of one agent, at the most: its name and description first, then its
# capabilities. PostgreSQL's tsvector holds 1 MB; this keeps it far below.
SEARCH_TEXT_MAX_CHARS = 100_000


def search_text_build(name: str, description: str, capabilities) -> str:
    parts = [name, description]
    for cap in capabilities:
        parts.extend([cap.name, cap.description, " ".join(cap.tags)])
    return "\n".join(p for p in parts if p)[:SEARCH_TEXT_MAX_CHARS]


# Relevance tiers on PostgreSQL, best first: every query word starts a word of the agent's
# name (2); of its name, capability names or tags (1); of any text searched (0).
NAME_MARK, TITLE_MARK = "~n", "~t"


def search_key(kind: str, value: str) -> str:
    """An exact filter key, as stored in AgentSearchText.keys and indexed as one lexeme.

    The leading ``~`` keeps keys apart from words: a query word is ``\\w+`` and matches only
    lexemes that start with it, and no word the text parser emits contains a space.
    """
    return f"~{kind} {value.lower()}"


def search_keys_build(name: str, capabilities) -> list[str]:
    """The lexemes the PostgreSQL index holds beside the text's words.

    The keys of the capability and tag filters: each capability's lower-cased name (as
    the capability filter compares it) and each tag (as CapabilityTag stores it). And, for
    the relevance tiers, the words of the agent's name (``"~n word"``) and of its titles:
    the name, capability names and tags (``"~t word"``).
    """
    keys = {f"{NAME_MARK} {word}" for word in _words(name)}
    titles = [name]
    for cap in capabilities:
        keys.add(search_key("capability", cap.name))
        keys.update(search_key("tag", tag) for tag in cap.tags)
        titles += [cap.name, *cap.tags]
    keys.update(f"{TITLE_MARK} {word}" for title in titles for word in _words(title))
    return sorted(keys)


def spaced_words(text: str) -> str:
    """The words of ``text`` lower-cased, space-separated, with a space before and after:
    a query word ``w`` starts one of them where the string holds `` w`` (an unlisted
    agent's words, ``UnlistedSearchText``, matched by ``LIKE``)."""
    words = _words(text)
    return f" {' '.join(words)} " if words else " "


def unlisted_words_build(name: str, description: str, capabilities) -> dict[str, str]:
    """``UnlistedSearchText``'s columns: all the words searched, the name's, and the
    titles' (the name, capability names and tags), as the relevance tiers read them."""
    titles = [name]
    for cap in capabilities:
        titles += [cap.name, *cap.tags]
    return {
        "words": spaced_words(search_text_build(name, description, capabilities)),
        "names": spaced_words(name),
        "titles": spaced_words(" ".join(titles)),
    }
