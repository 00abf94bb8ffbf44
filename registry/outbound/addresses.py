"""Where the fetcher may connect: public addresses only (``is_public_address``), and the
host names that settings let through (``FETCH_ALLOWED_HOSTS``: any address;
``FETCH_ALLOW_HTTP_HOSTS``: plain http)."""

import ipaddress

from django.conf import settings

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
