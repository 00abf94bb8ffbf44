"""The TLS side of the safe fetcher (registry/outbound/fetch.py): the verifying context
(certifi's roots, or FETCH_CA_BUNDLE) and the peer certificate's expiry."""

import functools
import ssl
from datetime import UTC, datetime

import certifi


def cert_expiry(response) -> datetime | None:
    """The verified peer certificate's notAfter, from the response's TLS connection."""
    stream = response.extensions.get("network_stream")
    ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
    try:
        not_after = (ssl_object.getpeercert() or {}).get("notAfter") if ssl_object else None
        return (
            datetime.fromtimestamp(ssl.cert_time_to_seconds(not_after), UTC) if not_after else None
        )
    except (ValueError, AttributeError):
        return None


@functools.lru_cache(maxsize=8)
def ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_bundle) if ca_bundle else certifi.where())
