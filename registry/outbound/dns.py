"""DNS lookups of the core: TXT (a domain claim's token at ``_a2a-registry-claim.<host>``)
and a host's addresses (the ``private-endpoint`` scanner), with the resolver settings of
registration by domain (DISCOVERY_DNS_NAMESERVERS, its port and timeout). Only the exact
name is asked, never a parent."""

from django.conf import settings

# dnspython is imported where a name is looked up: a web worker serving reads never needs it.


class TxtLookupError(Exception):
    """The lookup itself failed (timeout, SERVFAIL): not the same as no record."""


def txt_values(name: str) -> list[str]:
    """The TXT values at ``name``, each record's strings joined; [] when there are none."""
    import dns.exception
    import dns.resolver

    nameservers = list(settings.DISCOVERY_DNS_NAMESERVERS or [])
    resolver = dns.resolver.Resolver(configure=not nameservers)
    if nameservers:
        resolver.nameservers = nameservers
        resolver.port = int(settings.DISCOVERY_DNS_PORT)
    resolver.timeout = resolver.lifetime = float(settings.DISCOVERY_DNS_TIMEOUT)
    try:
        answer = resolver.resolve(f"{name.rstrip('.')}.", "TXT", search=False)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return []
    except dns.exception.DNSException as exc:
        raise TxtLookupError(f"The TXT lookup of {name} failed: {exc}") from None
    return [b"".join(rdata.strings).decode("utf-8", errors="replace") for rdata in answer]


def host_addresses(name: str, *, timeout: float) -> list[str]:
    """The IPv4 and IPv6 addresses of ``name`` (A and AAAA, asked within ``timeout`` in all);
    raises ``AddressLookupError`` when the name does not resolve (no such name, no
    address, a timeout, SERVFAIL)."""
    import time

    import dns.exception
    import dns.resolver

    nameservers = list(settings.DISCOVERY_DNS_NAMESERVERS or [])
    resolver = dns.resolver.Resolver(configure=not nameservers)
    if nameservers:
        resolver.nameservers = nameservers
        resolver.port = int(settings.DISCOVERY_DNS_PORT)
    deadline = time.monotonic() + timeout
    found: list[str] = []
    for kind in ("A", "AAAA"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AddressLookupError(f"{name} was not resolved in time")
        resolver.timeout = resolver.lifetime = left
        try:
            answer = resolver.resolve(f"{name.rstrip('.')}.", kind, search=False)
        except dns.resolver.NXDOMAIN:
            raise AddressLookupError(f"{name} does not exist") from None
        except dns.resolver.NoAnswer:
            continue
        except dns.exception.DNSException as exc:
            raise AddressLookupError(f"{name} was not resolved: {exc}") from None
        found += [rdata.address for rdata in answer]
    if not found:
        raise AddressLookupError(f"{name} has no address")
    return found


class AddressLookupError(Exception):
    """A host name's addresses could not be read (``host_addresses``)."""
