"""From a domain (or a URL) to an A2A agent card: the discovery bootstrap.

For a domain the candidates are, in order: the card URL hinted by a DNS TXT
record at ``_agent.<host>`` (the informal ``v=agent/1`` form or AID
``v=aid1``/``v=aid2`` with ``p=a2a``), ``/.well-known/agent-card.json`` (A2A
0.3+), then the legacy ``/.well-known/agent.json``. The first candidate that
yields a card ``card_validate`` accepts wins; every attempt is recorded.

TXT content is an untrusted hint: it only adds a URL to try, and the card
fetched from it must validate like any other. All HTTP goes through
``registry.outbound.fetch``; the TXT lookup (protocols/a2a/registration/txt_records.py) is the one
other network access (DNS, to the configured resolver).

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from protocols.a2a.cards.validation import card_validate
from protocols.a2a.registration.txt_records import (
    DiscoveryError,
    TxtHint,
    txt_hint_parse,
    txt_records,
)
from registry.http.jsonutil import Problem, join_path
from registry.outbound.fetch import FetchError, fetch
from registry.outbound.hosts import Domain, InvalidHost, domain_parse

if TYPE_CHECKING:
    import dns.resolver

WELL_KNOWN_PATH = "/.well-known/agent-card.json"


LEGACY_WELL_KNOWN_PATH = "/.well-known/agent.json"


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
class ResolvedCard:
    card: dict[str, Any]
    body: bytes  # the bytes received: store and serve these
    source_url: str
    path_used: str  # "dns-txt", "well-known", "legacy-well-known" or "url"
    txt_hint: TxtHint | None
    attempts: list[Attempt] = field(default_factory=list)
    origin_problems: list[Problem] = field(default_factory=list)


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
    except InvalidHost:
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
    resolver: "dns.resolver.Resolver | None" = None,
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
        try:
            target = domain_parse(domain)
        except InvalidHost as exc:
            raise DiscoveryError("invalid-domain", f"domain {exc}.") from None
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
    host: str, resolver: "dns.resolver.Resolver | None", attempts: list[Attempt]
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
