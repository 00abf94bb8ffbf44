"""From a domain (or a URL) to an A2A agent card: the discovery bootstrap.

For a domain the candidates are, in order: the card URL hinted by a DNS TXT
record at ``_agent.<host>`` (the informal ``v=agent/1`` form or AID
``v=aid1``/``v=aid2`` with ``p=a2a``), ``/.well-known/agent-card.json`` (A2A
0.3+), then the legacy ``/.well-known/agent.json``. The first candidate that
yields a card ``card_validate`` accepts wins; every attempt is recorded.

TXT content is an untrusted hint: it only adds a URL to try, and the card
fetched from it must validate like any other. All HTTP goes through
``registry.fetch``; the TXT lookup is the one other network access (DNS, to the
configured resolver).

Origin policy: every interface URL of the card must be on the domain's host or
on a subdomain of it (``a2a.example.com`` for ``example.com``), ports ignored,
and on the host of the TXT endpoint hint (``u=`` of ``v=agent/1``) when there is
one. Subdomains are accepted because agents commonly serve the card on the apex
and the endpoint on ``api.``/``a2a.``; a zone's owner controls its subdomains.
Mismatches are reported as ``origin_problems``, not raised: whether they reject
the card or flag it is the caller's policy.
"""

import copy
import ipaddress
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import dns.exception
import dns.resolver
import idna
from django.conf import settings

from a2a.validation import card_validate
from registry.fetch import FetchError, fetch
from registry.jsonutil import Problem, join_path

logger = logging.getLogger(__name__)

WELL_KNOWN_PATH = "/.well-known/agent-card.json"
LEGACY_WELL_KNOWN_PATH = "/.well-known/agent.json"

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
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


class DiscoveryError(Exception):
    """Discovery failed; ``reason`` is a short code, ``attempts`` what was tried.

    Reasons: ``invalid-domain``, ``no-card``, ``dns-failure`` (DnsLookupError),
    ``txt-invalid`` and ``txt-ambiguous`` (TxtHintError).
    """

    def __init__(self, reason: str, detail: str = "", *, attempts: Sequence["Attempt"] = ()):
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


class Domain(NamedTuple):
    host: str  # lower-case A-labels, or an IP address
    port: int | None

    @property
    def is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port else host

    def url(self, path: str) -> str:
        return f"https://{self.authority}{path}"


class Attempt(NamedTuple):
    """One step of discovery: a DNS lookup (``dns:_agent.<host>``) or a candidate URL.

    ``outcome`` is ``ok``, ``invalid-card``, a ``FetchError`` reason
    (``http-status``, ``blocked-address``, ...), or for DNS ``hint``,
    ``no-record``, ``dns-failure``, ``txt-invalid``, ``txt-ambiguous``.
    """

    url: str
    outcome: str
    detail: str
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class TxtHint:
    grammar: str  # "agent/1", "aid1" or "aid2"
    record: str  # the TXT value as joined
    fields: Mapping[str, str]  # canonical key names (AID long names)
    card_url: str | None  # where to fetch the card from, if the record says
    endpoint_url: str | None  # the A2A endpoint the record announces (v=agent/1 u=)
    problems: tuple[str, ...] = ()  # what was ignored or deserves a warning


@dataclass(frozen=True)
class ResolvedCard:
    card: dict[str, Any]
    body: bytes  # the bytes received: store and serve these
    source_url: str
    path_used: str  # "dns-txt", "well-known", "legacy-well-known" or "url"
    txt_hint: TxtHint | None
    attempts: list[Attempt] = field(default_factory=list)
    origin_problems: list[Problem] = field(default_factory=list)


def domain_parse(value: str) -> Domain:
    """A host name with an optional port, as IDNA A-labels; DiscoveryError('invalid-domain')."""

    def invalid(why: str) -> DiscoveryError:
        return DiscoveryError("invalid-domain", f"{value!r} is not a domain name: {why}.")

    if not isinstance(value, str) or not value.strip():
        raise invalid("it is empty")
    text = value.strip()
    if re.search(r"[\s/@?#\\]", text):
        raise invalid("give a host name with an optional port, not a URL")
    port_text = None
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise invalid("the IPv6 address is not closed by ']'")
        port_text = rest[1:] if rest else None
        try:
            host = str(ipaddress.IPv6Address(host))
        except ValueError:
            raise invalid("the bracketed part is not an IPv6 address") from None
        return Domain(host, _port(port_text, invalid))
    if text.count(":") == 1:
        text, port_text = text.split(":")
    elif ":" in text:
        raise invalid("write an IPv6 address in brackets")
    port = _port(port_text, invalid)
    text = text.rstrip(".")
    try:
        return Domain(str(ipaddress.IPv4Address(text)), port)
    except ValueError:
        pass
    try:
        host = idna.encode(text, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError) as exc:
        raise invalid(f"IDNA conversion failed ({exc})") from None
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise invalid("each label must be letters, digits and inner hyphens, up to 63")
    if labels[-1].isdigit():
        raise invalid("the last label is all digits")
    return Domain(host, port)


def _port(text: str | None, invalid) -> int | None:
    if text is None:
        return None
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise invalid("the port must be a number from 1 to 65535")
    return int(text)


def dns_resolver() -> dns.resolver.Resolver:
    """A resolver for DISCOVERY_DNS_NAMESERVERS (else the system's) and DISCOVERY_DNS_TIMEOUT."""
    nameservers = list(getattr(settings, "DISCOVERY_DNS_NAMESERVERS", None) or [])
    resolver = dns.resolver.Resolver(configure=not nameservers)
    if nameservers:
        resolver.nameservers = nameservers
        resolver.port = int(getattr(settings, "DISCOVERY_DNS_PORT", 53))
    timeout = float(getattr(settings, "DISCOVERY_DNS_TIMEOUT", 3))
    resolver.timeout = timeout
    resolver.lifetime = timeout
    return resolver


def txt_records(host: str, resolver: dns.resolver.Resolver | None = None) -> list[str]:
    """The TXT values at ``_agent.<host>``, each record's strings joined; [] if there are none.

    Only that exact name is asked (AID: never walk up to parent names); raises
    DnsLookupError when the lookup itself fails.
    """
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


def _https_problem(value: str) -> str | None:
    try:
        parts = urlsplit(value)
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() != "https" or not parts.netloc:
        return "is not an absolute https URL"
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
        problem = _https_problem(value) if value is not None else None
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
    if proto in _AID_HTTPS_PROTOS and _https_problem(uri):
        raise _InvalidRecord(f"uri {uri} {_https_problem(uri)}")
    if proto == "zeroconf" and not uri.startswith("zeroconf:"):
        raise _InvalidRecord("a zeroconf uri must start with 'zeroconf:'")
    if proto in _AID_SCHEMES and not uri.startswith(_AID_SCHEMES[proto]):
        raise _InvalidRecord(f"a {proto} uri must start with {' or '.join(_AID_SCHEMES[proto])}")
    if "auth" in fields and fields["auth"] not in _AID_AUTH:
        raise _InvalidRecord(f"unknown auth token {fields['auth']!r}")
    if "desc" in fields and len(fields["desc"].encode()) > 60:
        raise _InvalidRecord("desc is longer than 60 UTF-8 bytes")
    if "docs" in fields and _https_problem(fields["docs"]):
        raise _InvalidRecord(f"docs {fields['docs']} {_https_problem(fields['docs'])}")
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


def card_interface_urls(card: dict) -> list[tuple[str, str]]:
    """(path, url) of every interface: 1.0 supportedInterfaces, 0.3 url and additionalInterfaces."""
    found = []
    key = "supported_interfaces" if "supported_interfaces" in card else "supportedInterfaces"
    for index, iface in enumerate(card.get(key) or []):
        if isinstance(iface, dict) and isinstance(iface.get("url"), str):
            found.append((join_path(join_path(key, index), "url"), iface["url"]))
    if isinstance(card.get("url"), str):
        found.append(("url", card["url"]))
    key = "additional_interfaces" if "additional_interfaces" in card else "additionalInterfaces"
    for index, iface in enumerate(card.get(key) or []):
        if isinstance(iface, dict) and isinstance(iface.get("url"), str):
            found.append((join_path(join_path(key, index), "url"), iface["url"]))
    return found


def _url_host(url: str) -> str | None:
    """The IDNA host of a URL, or of a gRPC ``host:port`` authority."""
    try:
        host = urlsplit(url if "://" in url else f"//{url}").hostname
    except ValueError:
        return None
    if not host:
        return None
    try:
        return _host_normalize(host)
    except DiscoveryError:
        return None


def _host_normalize(host: str) -> str:
    """An IP address in its standard form, or a host name as lower-case A-labels."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return domain_parse(host).host


def card_origin_problems(
    card: dict, host: str, *, endpoint_hint: str | None = None
) -> list[Problem]:
    """Interface URLs not on ``host`` (or a subdomain of it) or not on the endpoint hint's host."""
    base = _host_normalize(host)
    base_is_ip = Domain(base, None).is_ip
    hint_host = _url_host(endpoint_hint) if endpoint_hint else None
    problems = []
    for path, url in card_interface_urls(card):
        url_host = _url_host(url)
        if url_host is None:
            problems.append(Problem(path, "has no host that can be compared with the domain"))
            continue
        if base_is_ip and url_host != base:
            problems.append(Problem(path, f"is on {url_host}, not on {base}"))
        elif not (url_host == base or url_host.endswith("." + base)):
            problems.append(Problem(path, f"is on {url_host}, not on {base} or a subdomain of it"))
        if hint_host and url_host != hint_host:
            problems.append(
                Problem(path, f"is on {url_host}, not on {hint_host} of the DNS TXT hint u=")
            )
    return problems


def card_resolve(
    domain: str | None = None,
    url: str | None = None,
    *,
    resolver: dns.resolver.Resolver | None = None,
) -> ResolvedCard:
    """Find a valid A2A card for a domain (TXT hint, well-known, legacy) or at a URL.

    Raises DiscoveryError('invalid-domain') for a malformed domain and
    DiscoveryError('no-card', attempts=...) when no candidate yields a valid card.
    """
    if (domain is None) == (url is None):
        raise ValueError("card_resolve needs exactly one of domain and url")
    attempts: list[Attempt] = []
    hint: TxtHint | None = None
    if url is not None:
        candidates = [(url, "url")]
        origin_host = _url_host(url)
    else:
        target = domain_parse(domain)
        origin_host = target.host
        candidates = []
        if not target.is_ip:
            hint = _hint_lookup(target.host, resolver, attempts)
        if hint and hint.card_url:
            candidates.append((hint.card_url, "dns-txt"))
        for path, path_used in (
            (WELL_KNOWN_PATH, "well-known"),
            (LEGACY_WELL_KNOWN_PATH, "legacy-well-known"),
        ):
            if target.url(path) not in {candidate for candidate, _ in candidates}:
                candidates.append((target.url(path), path_used))

    for candidate, path_used in candidates:
        try:
            result = fetch(candidate)
            document = result.json()
        except FetchError as exc:
            attempts.append(Attempt(candidate, exc.reason, exc.detail))
            continue
        report = card_validate(copy.deepcopy(document))
        if not report.ok:
            attempts.append(
                Attempt(
                    candidate,
                    "invalid-card",
                    "The document is not a valid A2A agent card: "
                    + "; ".join(f"{p.path}: {p.message}" for p in report.errors),
                    tuple(report.errors),
                )
            )
            continue
        attempts.append(Attempt(candidate, "ok", f"A valid agent card from {result.url}."))
        origin_problems = (
            card_origin_problems(
                document, origin_host, endpoint_hint=hint.endpoint_url if hint else None
            )
            if origin_host
            else [Problem("(card)", "the card URL has no host to compare interfaces with")]
        )
        return ResolvedCard(
            card=document,
            body=result.body,
            source_url=result.url,
            path_used=path_used,
            txt_hint=hint,
            attempts=attempts,
            origin_problems=origin_problems,
        )
    what = f"for {domain}" if domain is not None else f"at {url}"
    raise DiscoveryError(
        "no-card",
        f"No valid A2A agent card was found {what}: "
        + "; ".join(f"{a.url}: {a.outcome}" for a in attempts),
        attempts=attempts,
    )


def _hint_lookup(
    host: str, resolver: dns.resolver.Resolver | None, attempts: list[Attempt]
) -> TxtHint | None:
    """The TXT hint for a host, recording the lookup; DNS trouble never stops discovery."""
    name = f"dns:_agent.{host}"
    try:
        hint = txt_hint_parse(txt_records(host, resolver))
    except DiscoveryError as exc:
        attempts.append(Attempt(name, exc.reason, exc.detail))
        return None
    if hint is None:
        attempts.append(Attempt(name, "no-record", "No TXT record in a known grammar."))
        return hint
    said = f"card {hint.card_url}" if hint.card_url else "no card URL"
    detail = f"A {hint.grammar} record: {said}" + "".join(f"; {p}" for p in hint.problems)
    attempts.append(Attempt(name, "hint", detail + "."))
    return hint
