"""The DNS step of the discovery bootstrap: the TXT record at ``_agent.<host>`` that may
hint where a domain's A2A card is (the informal ``v=agent/1`` form, or AID ``v=aid1`` /
``v=aid2`` with ``p=a2a``), looked up with dnspython, and the bootstrap's errors.

TXT content is an untrusted hint: it only adds a URL to try, and the card fetched from it
must validate like any other."""

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings

from registry.outbound.hosts import https_url_problem

if TYPE_CHECKING:
    import dns.resolver

# dnspython is imported where a name is looked up: a web worker serving reads never needs it.

logger = logging.getLogger(__name__)


AGENT1 = "agent/1"


AID1 = "aid1"


AID2 = "aid2"


# When several grammars are published, the first one with a valid record wins.
_GRAMMAR_PREFERENCE = (AID2, AID1, AGENT1)


_AID_ALIASES = {
    "v": "version",
    "u": "uri",
    "p": "proto",
    "a": "auth",
    "s": "desc",
    "d": "docs",
    "e": "dep",
    "k": "pka",
    "i": "kid",
}


_AID_HTTPS_PROTOS = {"mcp", "a2a", "openapi", "grpc", "graphql", "ucp"}


_AID_SCHEMES = {"websocket": ("wss:",), "local": ("docker:", "npx:", "pip:")}


_AID_PROTOS = _AID_HTTPS_PROTOS | {"websocket", "local", "zeroconf"}


_AID_AUTH = {"none", "pat", "apikey", "basic", "oauth2_device", "oauth2_code", "mtls", "custom"}


_AID_KID = re.compile(r"^[a-z0-9]{1,6}$")


class DiscoveryError(Exception):
    """Discovery failed; ``reason`` is a short code, ``attempts`` what was tried.

    Reasons: ``invalid-domain``, ``no-card``, ``dns-failure`` (DnsLookupError),
    ``txt-invalid`` and ``txt-ambiguous`` (TxtHintError).
    """

    def __init__(self, reason: str, detail: str = "", *, attempts: Sequence[Any] = ()):
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail or reason
        self.attempts = list(attempts)


class DnsLookupError(DiscoveryError):
    """The TXT lookup failed (timeout, SERVFAIL, no nameserver): not the same as no record."""

    def __init__(self, detail: str):
        super().__init__("dns-failure", detail)


class TxtHintError(DiscoveryError):
    """Unusable TXT records: none valid (``txt-invalid``) or several (``txt-ambiguous``)."""


@dataclass(frozen=True)
class TxtHint:
    grammar: str  # "agent/1", "aid1" or "aid2"
    record: str  # the TXT value as joined
    fields: Mapping[str, str]  # canonical key names (AID long names)
    card_url: str | None  # where to fetch the card from, if the record says
    endpoint_url: str | None  # the A2A endpoint the record announces (v=agent/1 u=)
    problems: tuple[str, ...] = ()  # what was ignored or deserves a warning


def dns_resolver() -> "dns.resolver.Resolver":
    """A resolver for DISCOVERY_DNS_NAMESERVERS (else the system's) and DISCOVERY_DNS_TIMEOUT."""
    import dns.resolver

    nameservers = list(getattr(settings, "DISCOVERY_DNS_NAMESERVERS", None) or [])
    resolver = dns.resolver.Resolver(configure=not nameservers)
    if nameservers:
        resolver.nameservers = nameservers
        resolver.port = int(getattr(settings, "DISCOVERY_DNS_PORT", 53))
    timeout = float(getattr(settings, "DISCOVERY_DNS_TIMEOUT", 3))
    resolver.timeout = timeout
    resolver.lifetime = timeout
    return resolver


def txt_records(host: str, resolver: "dns.resolver.Resolver | None" = None) -> list[str]:
    """The TXT values at ``_agent.<host>``, each record's strings joined; [] if there are none.

    Only that exact name is asked (AID: never walk up to parent names); raises
    DnsLookupError when the lookup itself fails.
    """
    import dns.exception
    import dns.resolver

    qname = f"_agent.{host.rstrip('.')}."
    try:
        if resolver is None:
            resolver = dns_resolver()
        answer = resolver.resolve(qname, "TXT", search=False)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return []
    except dns.exception.DNSException as exc:
        raise DnsLookupError(f"The TXT lookup of {qname} failed: {exc}") from None
    return [b"".join(rdata.strings).decode("utf-8", errors="replace") for rdata in answer]


class _InvalidRecord(ValueError):
    pass


def txt_hint_parse(records: Sequence[str], *, now: datetime | None = None) -> TxtHint | None:
    """The discovery hint in a set of TXT values, or None if none uses a known grammar.

    Exactly one valid record of the preferred grammar (aid2, aid1, agent/1) must
    be present: several raise TxtHintError('txt-ambiguous'); records in a known
    grammar that are all invalid raise TxtHintError('txt-invalid').
    """
    now = now or datetime.now(UTC)
    valid: dict[str, list[TxtHint]] = {grammar: [] for grammar in _GRAMMAR_PREFERENCE}
    invalid: list[str] = []
    for record in records:
        grammar = _grammar(record)
        if grammar is None:
            logger.info("Ignoring a TXT record in no known discovery grammar: %r", record)
            continue
        try:
            hint = _agent1_parse(record) if grammar == AGENT1 else _aid_parse(record, now)
        except _InvalidRecord as exc:
            invalid.append(f"{record!r}: {exc}")
        else:
            valid[hint.grammar].append(hint)
    for grammar in _GRAMMAR_PREFERENCE:
        if len(valid[grammar]) > 1:
            raise TxtHintError(
                "txt-ambiguous",
                f"{len(valid[grammar])} valid {grammar} TXT records; exactly one is allowed.",
            )
        if valid[grammar]:
            return valid[grammar][0]
    if invalid:
        raise TxtHintError("txt-invalid", "Invalid TXT record: " + "; ".join(invalid))
    return None


def _grammar(record: str) -> str | None:
    for pair in record.split(";"):
        key, _, value = pair.partition("=")
        if key.strip().lower() in ("v", "version") and value.strip().lower() in (AID1, AID2):
            return value.strip().lower()
    for token in re.split(r"[;\s]+", record):
        key, _, value = token.partition("=")
        if key.lower() == "v" and value.lower() == AGENT1:
            return AGENT1
    return None


def _agent1_parse(record: str) -> TxtHint:
    fields: dict[str, str] = {}
    for token in re.split(r"[;\s]+", record.strip()):
        key, sep, value = token.partition("=")
        key = key.lower()
        if not sep or key not in ("v", "c", "u"):
            continue
        if key in fields:
            raise _InvalidRecord(f"the key {key!r} appears twice")
        fields[key] = value
    problems = []
    urls: dict[str, str | None] = {}
    for key in ("c", "u"):
        value = fields.get(key)
        problem = https_url_problem(value) if value is not None else None
        if problem:
            problems.append(f"{key}={value} {problem}; ignored")
        urls[key] = None if problem else value
    return TxtHint(AGENT1, record, fields, urls["c"], urls["u"], tuple(problems))


def _aid_parse(record: str, now: datetime) -> TxtHint:
    raw: dict[str, str] = {}
    for pair in record.split(";"):
        if not pair.strip():
            continue
        key, sep, value = pair.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not key or not value:
            raise _InvalidRecord(f"{pair.strip()!r} is not a key=value pair")
        if key in raw:
            raise _InvalidRecord(f"the key {key!r} appears twice")
        raw[key] = value
    fields: dict[str, str] = {}
    for key, value in raw.items():
        name = _AID_ALIASES.get(key, key)
        if name in fields:
            raise _InvalidRecord(f"both {name!r} and its alias are present")
        if name in _AID_ALIASES.values():
            fields[name] = value
    for name in ("version", "uri", "proto"):
        if name not in fields:
            raise _InvalidRecord(f"the required key {name!r} is missing")
    version, uri, proto = fields["version"].lower(), fields["uri"], fields["proto"]
    if proto not in _AID_PROTOS:
        raise _InvalidRecord(f"unsupported proto {proto!r}")
    if proto in _AID_HTTPS_PROTOS and https_url_problem(uri):
        raise _InvalidRecord(f"uri {uri} {https_url_problem(uri)}")
    if proto == "zeroconf" and not uri.startswith("zeroconf:"):
        raise _InvalidRecord("a zeroconf uri must start with 'zeroconf:'")
    if proto in _AID_SCHEMES and not uri.startswith(_AID_SCHEMES[proto]):
        raise _InvalidRecord(f"a {proto} uri must start with {' or '.join(_AID_SCHEMES[proto])}")
    if "auth" in fields and fields["auth"] not in _AID_AUTH:
        raise _InvalidRecord(f"unknown auth token {fields['auth']!r}")
    if "desc" in fields and len(fields["desc"].encode()) > 60:
        raise _InvalidRecord("desc is longer than 60 UTF-8 bytes")
    if "docs" in fields and https_url_problem(fields["docs"]):
        raise _InvalidRecord(f"docs {fields['docs']} {https_url_problem(fields['docs'])}")
    if version == AID1 and "pka" in fields and "kid" not in fields:
        raise _InvalidRecord("kid is required with pka")
    if "kid" in fields and not _AID_KID.match(fields["kid"]):
        raise _InvalidRecord("kid must be 1 to 6 characters a-z, 0-9")
    problems = []
    card_url: str | None = uri if proto == "a2a" else None
    if proto != "a2a":
        problems.append(f"proto {proto}: the record announces no A2A card")
    if "dep" in fields:
        dep = _aid_time(fields["dep"])
        if dep <= now:
            problems.append(f"deprecated since {fields['dep']}; not used")
            card_url = None
        else:
            problems.append(f"deprecated from {fields['dep']}")
    if "pka" in fields:
        problems.append("pka given: the AID endpoint proof is not performed by the registry")
    return TxtHint(version, record, fields, card_url, None, tuple(problems))


def _aid_time(value: str) -> datetime:
    if not value.endswith("Z"):
        raise _InvalidRecord("dep must be an ISO 8601 UTC time ending in Z")
    try:
        return datetime.fromisoformat(value).astimezone(UTC)
    except ValueError:
        raise _InvalidRecord(f"dep {value!r} is not an ISO 8601 time") from None
