"""The scanners the registry ships (registered by RegistryConfig.ready(); verdicts: the
``SCAN_VERDICTS`` setting):

- ``invisible-characters``: zero-width, bidirectional-control and tag characters in names,
  descriptions and skills: a known way to hide instructions from the people who read a card;
- ``confusable-name``: a name that imitates a brand (``SCAN_BRANDS``) or a verified
  publisher's agent with look-alike characters (Unicode confusables: ``Paypal`` with a
  Cyrillic ``a`` (U+0430), ``G00gle``);
- ``model-directed-text``: text addressed to a model rather than a person ("ignore previous
  instructions", role or system prompts inside a description);
- ``private-endpoint``: an endpoint on a loopback, private or link-local address, a name
  that only resolves inside a network (``localhost``, ``.internal``, ``.local``), or a name
  whose DNS answer is such an address (``SCAN_RESOLVE_HOSTS``: asked once per host and
  write, within ``SCAN_DNS_TIMEOUT``; a bulk write's hosts all at once, side by side:
  ``hosts_resolve``);
- ``unresolved-endpoint``: an endpoint host that did not resolve (a note: DNS fails for
  reasons of its own, and a name may be registered before it is published);
- ``oversized-card``: texts longer than ``SCAN_TEXT_MAX_CHARS``, or deeply repetitive.
"""

import functools
import ipaddress
import re
import unicodedata
import zlib
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from django.conf import settings

from registry.extensions import Scanner
from registry.outbound.addresses import is_public_address
from registry.outbound.dns import AddressLookupError, host_addresses

_INVISIBLE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def invisible_characters(subject) -> list[tuple[str, str]]:
    found = []
    for path, text in subject.texts:
        match = _INVISIBLE.search(text)
        if match:
            char = match.group()
            name = unicodedata.name(char, f"U+{ord(char):04X}")
            count = len(_INVISIBLE.findall(text))
            found.append((path, f"{count} invisible character(s), the first {name}"))
    return found


@functools.lru_cache(maxsize=8192)
def _latin(char: str) -> str:
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    if found:
        for glyph in found[0]["homoglyphs"]:
            if glyph["c"].isascii():
                return glyph["c"]
    return char


def skeleton(text: str) -> str:
    """What ``text`` looks like: each character as the Latin one it can be taken for,
    lower-cased, without spaces and punctuation (UTS 39's idea of a skeleton)."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in "".join(_latin(c) for c in text).lower() if c.isalnum())


def _plain(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


@functools.lru_cache(maxsize=1)
def _brands(brands: tuple[str, ...]) -> dict[str, str]:
    return {skeleton(brand): brand for brand in brands if skeleton(brand)}


# Where the names of verified publishers' agents come from ({skeleton: name}): set by
# registry.moderation.publishers; a name imitating one of them is confusable too.
protected_sources: list = []


def confusable_name(subject) -> list[tuple[str, str]]:
    protected = dict(_brands(tuple(settings.SCAN_BRANDS)))
    for source in protected_sources:
        protected.update(source())
    if not protected or not subject.name:
        return []
    found = []
    words = re.findall(r"\S+", subject.name)
    # Each word and each run of two or three words (a brand of two words, "Pay Pal").
    runs = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words))}
    for run in sorted(runs):
        shape = skeleton(run)
        brand = protected.get(shape)
        if brand is not None and _plain(run) != _plain(brand):
            found.append(("name", f"'{run}' looks like '{brand}' (look-alike characters)"))
    return found[:5]


_MODEL_DIRECTED = re.compile(
    r"ignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|preceding)\s+"
    r"(instructions|prompts?|messages?|rules)"
    r"|disregard\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|your)\s+(instructions|rules)"
    r"|forget\s+(all\s+)?(your|previous|prior)\s+instructions"
    r"|\byou\s+are\s+now\s+(a|an|the|in)\b"
    r"|\b(system|developer)\s+prompt\b"
    r"|<\|?(im_start|im_end|system|endoftext)\|?>"
    r"|\[/?INST\]|<</?SYS>>"
    r"|(^|\n)\s*(###\s*)?(system|assistant)\s*:"
    r"|\bnew\s+instructions\s*:",
    re.IGNORECASE,
)


def model_directed_text(subject) -> list[tuple[str, str]]:
    found = []
    for path, text in subject.texts:
        match = _MODEL_DIRECTED.search(text)
        if match:
            quoted = " ".join(match.group().split())[:60]
            found.append((path, f"addresses a model, not a person: '{quoted}'"))
    return found


_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet")


def _private_host(host: str) -> bool:
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not address.is_global


def _is_name(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return True
    return False


def _resolved(subject, host: str) -> list[str] | str:
    """The host's addresses, or why it did not resolve; asked once per write (the subject
    keeps the answers for both rules that read them)."""
    cache = subject.resolved
    if host not in cache:
        cache[host] = _lookup(host)
    return cache[host]


def _hosts(subject):
    """(path, host) of each endpoint address with a host."""
    return address_hosts(subject.addresses)


def address_hosts(addresses):
    """(path, host) of each (path, address) with a host, the host as the scanners ask it."""
    for path, address in addresses:
        try:
            host = urlsplit(address).hostname
        except ValueError:
            continue
        if host:
            yield path, host.rstrip(".").lower()


def _lookup(host: str) -> list[str] | str:
    try:
        return host_addresses(host, timeout=settings.SCAN_DNS_TIMEOUT)
    except AddressLookupError as exc:
        return str(exc)


def hosts_resolve(hosts) -> dict[str, list[str] | str]:
    """The addresses of each host name the scanners would ask (or why it did not resolve),
    asked side by side, ``SCAN_DNS_CONCURRENCY`` at a time, each within
    ``SCAN_DNS_TIMEOUT``: what a bulk write's subjects start from (``Subject.resolved``)."""
    names = sorted({h for h in hosts if not _private_host(h) and _is_name(h)})
    if not settings.SCAN_RESOLVE_HOSTS or not names:
        return {}
    workers = max(1, min(len(names), settings.SCAN_DNS_CONCURRENCY))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scan-dns") as pool:
        return dict(zip(names, pool.map(_lookup, names), strict=True))


def private_endpoint(subject) -> list[tuple[str, str]]:
    found = []
    for path, host in _hosts(subject):
        if _private_host(host):
            found.append((path, f"'{host}' is a loopback, private or local address"))
        elif settings.SCAN_RESOLVE_HOSTS and _is_name(host):
            addresses = _resolved(subject, host)
            if isinstance(addresses, str):
                continue  # unresolved-endpoint notes it
            private = [a for a in addresses if not is_public_address(a)]
            if private:
                found.append(
                    (
                        path,
                        f"'{host}' resolves to {private[0]}, a loopback, private or "
                        "link-local address",
                    )
                )
    return found


def unresolved_endpoint(subject) -> list[tuple[str, str]]:
    if not settings.SCAN_RESOLVE_HOSTS:
        return []
    found = []
    for path, host in _hosts(subject):
        if not _private_host(host) and _is_name(host):
            addresses = _resolved(subject, host)
            if isinstance(addresses, str):
                found.append((path, f"'{host}' did not resolve ({addresses})"))
    return found


def oversized_card(subject) -> list[tuple[str, str]]:
    text = "\n".join(text for _, text in subject.texts)
    if len(text) > settings.SCAN_TEXT_MAX_CHARS:
        return [("", f"{len(text)} characters of text, more than {settings.SCAN_TEXT_MAX_CHARS}")]
    if len(text) >= 2000:
        packed = len(zlib.compress(text.encode(), 6))
        if packed * 12 < len(text.encode()):
            return [("", f"deeply repetitive: {len(text)} characters compress to {packed} bytes")]
    return []


SHIPPED = [
    Scanner("invisible-characters", invisible_characters, "review", "high"),
    Scanner("confusable-name", confusable_name, "review", "high"),
    Scanner("model-directed-text", model_directed_text, "review", "medium"),
    Scanner("private-endpoint", private_endpoint, "review", "medium"),
    Scanner("unresolved-endpoint", unresolved_endpoint, "note", "low"),
    Scanner("oversized-card", oversized_card, "review", "low"),
]
