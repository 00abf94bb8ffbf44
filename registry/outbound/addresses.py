"""Where the fetcher may connect: public addresses only (``is_public_address``), the host
names that settings let through (``FETCH_ALLOWED_HOSTS``: any address;
``FETCH_ALLOW_HTTP_HOSTS``: plain http), what to set when DEBUG is on and a refusal is for
a host on the developer's machine (``setting_hint``, ``ca_bundle_hint``), and the backend
that connects to the checked addresses only (``PinnedBackend``)."""

import ipaddress
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx
from django.conf import settings

from registry.outbound import deadlines

DEFAULT_PORTS = {"https": 443, "http": 80}

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def is_public_address(address: str) -> bool:
    """Whether the registry may connect to an IP address: global unicast only.

    IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged by
    the embedded address, since that is where the packets end up.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
        if embedded is not None:
            return is_public_address(str(embedded))
        if ip in _TEREDO or ip.is_site_local:
            return False
    return ip.is_global and not (
        ip.is_multicast
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_unspecified
    )


def host_name(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


def host_setting(name: str) -> set[str]:
    return {host_name(host) for host in getattr(settings, name, [])}


def setting_hint(setting: str, name: str, *, also_private: bool = False) -> str:
    """In DEBUG (``make run``), how to lift a refusal for a host on the developer's machine:
    the setting that would, with the value to add (docs/guides/local-development.md); with
    ``also_private``, the private-address guard's too, which the host meets next."""
    if not settings.DEBUG:
        return ""
    wanted = [setting, "FETCH_ALLOWED_HOSTS"] if also_private else [setting]
    pairs = [f"{s}={','.join(sorted(host_setting(s) | {name}))}" for s in wanted]
    return f" DEBUG: set {' and '.join(pairs)} to allow it (local development only)."


def host_is_local(name: str) -> bool:
    """A loopback or private host the private-address guard would refuse as well."""
    if name in host_setting("FETCH_ALLOWED_HOSTS"):
        return False
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return not is_public_address(name)
    except ValueError:
        return False  # a name: its addresses are checked when it resolves


def ca_bundle_hint() -> str:
    """In DEBUG, what to do about a certificate that does not verify: the CA file to trust."""
    if not settings.DEBUG:
        return ""
    if bundle := getattr(settings, "FETCH_CA_BUNDLE", None):
        return f" (DEBUG: FETCH_CA_BUNDLE={bundle} is the only CA trusted)"
    return (
        " (DEBUG: for a local site with a certificate of your own, set "
        "FETCH_CA_BUNDLE=<its certificate or its CA's, a PEM file> to trust it)"
    )


@dataclass(frozen=True)
class Target:
    url: httpx.URL
    host: str
    port: int
    addresses: tuple[str, ...]


class PinnedBackend(httpcore.SyncBackend):
    """Connects to the addresses that were resolved and checked; never resolves again.

    Only the TCP connect is redirected: httpcore still hands the URL's host to
    TLS, so SNI and certificate verification use the name, not the address.
    """

    def __init__(self, target: Target, deadline: float):
        self._target = target
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        if (host, port) != (self._target.host, self._target.port):
            raise httpcore.ConnectError(f"{host}:{port} is not the checked target")
        error: Exception | None = None
        for address in self._target.addresses:
            try:
                stream = super().connect_tcp(
                    address,
                    port,
                    deadlines.connect_timeout(timeout, self._deadline),
                    local_address,
                    socket_options,
                )
                return deadlines.DeadlineStream(stream, self._deadline)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error
