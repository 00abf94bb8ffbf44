"""DNS TXT lookups of the core (a domain claim's token at ``_a2a-registry-claim.<host>``),
with the resolver settings of registration by domain (DISCOVERY_DNS_NAMESERVERS, its port
and timeout). Only the exact name is asked, never a parent."""

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
