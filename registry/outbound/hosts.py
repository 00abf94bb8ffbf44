"""Hosts and URLs, one rule each for every app: a domain as the user gives it (UTS46 IDNA
to lower-case A-labels, so ``straße.de`` is ``xn--strae-oqa.de`` wherever it is checked),
the authority (host[:port]) of a URL, and the https rule for URLs the registry accepts."""

import ipaddress
import re
from typing import NamedTuple
from urllib.parse import urlsplit

import idna

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


class InvalidHost(ValueError):
    """The text is not a host name (or IP address) with an optional port; the message
    reads after the field's name: "domain 'x' is not a valid host name: …"."""


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


def domain_parse(value: object) -> Domain:
    """A host name (IDNA A-labels, UTS46-mapped), IPv4 or bracketed IPv6 address, with an
    optional port; raises InvalidHost."""

    def invalid(why: str) -> InvalidHost:
        return InvalidHost(f"{value!r} is not a valid host name: {why}")

    if not isinstance(value, str) or not value.strip():
        raise InvalidHost("is required: a host name such as agents.example.com")
    text = value.strip()
    if re.search(r"[\s/@?#\\]", text):
        raise invalid("give the host name alone, with an optional port, not a URL")
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise invalid("the IPv6 address is not closed by ']'")
        try:
            host = str(ipaddress.IPv6Address(host))
        except ValueError:
            raise invalid("the bracketed part is not an IPv6 address") from None
        return Domain(host, _port(rest[1:] if rest else None, invalid))
    port_text = None
    if text.count(":") == 1:
        text, port_text = text.split(":")
    elif ":" in text:
        raise invalid("write an IPv6 address in brackets, [2001:db8::1]")
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


def url_authority(url: str) -> str | None:
    """host[:port] of a URL (the port only when not 443), the host lower-cased: the domain
    a card belongs to; None for a URL without a host."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port and port != 443 else host


CREDENTIALS_PROBLEM = "must not carry credentials (user:password@): addresses are served publicly"


def url_credentials_problem(value: str) -> str | None:
    """Why an address may not be stored: it names a user or password (every address and
    card URL is served to anyone), or None."""
    try:
        netloc = urlsplit(value).netloc
    except ValueError:
        return None
    return CREDENTIALS_PROBLEM if "@" in netloc else None


def https_url_problem(value: str, *, allow_http: bool = False) -> str | None:
    """Why ``value`` is not an acceptable URL (absolute, https, with a host; plain http
    only where a setting allows it), or None."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises on a port out of range)
    except ValueError:
        return "is not a valid URL"
    if not parts.scheme or not parts.netloc or not parts.hostname:
        return "must be an absolute URL"
    if "@" in parts.netloc:
        return CREDENTIALS_PROBLEM
    if parts.scheme == "https" or (parts.scheme == "http" and allow_http):
        return None
    return "must be an https URL"
