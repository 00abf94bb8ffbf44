"""gRPC channels: the outbound requests that cannot go through httpx (an A2A agent's gRPC
binding, which its task probe calls with a2a-sdk's gRPC transport). grpc opens its own
connections, so the safe fetcher's rules are applied to the target before a channel opens:

- the address (``host:port``, or an ``https``/``grpc``/``grpcs`` URL) is checked and its
  host resolved once, within the deadline, as ``fetch`` checks a URL (``fetch.
  target_checked``): a host that resolves to a non-public address is refused unless
  ``FETCH_ALLOWED_HOSTS`` names it; credentials in the address are refused;
- the channel is pinned to those addresses (an ``ipv4:``/``ipv6:`` target: grpc resolves
  nothing itself), with TLS always, verified for the host's name
  (``grpc.ssl_target_name_override``) against certifi's roots or ``FETCH_CA_BUNDLE``; no
  proxy, no retries, the registry's User-Agent, answers of at most ``MAX_ANSWER_BYTES``;
- every call is given a deadline by its caller (grpc's own timeout), and the caller bounds
  the whole exchange as well.

grpc does not show the peer certificate, so ``tls_expiry`` makes one TLS handshake of its
own to the same pinned address, within the deadline, to read the certificate's expiry and
to tell a failed TLS handshake from another failure."""

import socket
import ssl
from datetime import UTC, datetime
from urllib.parse import urlsplit

import certifi
from django.conf import settings

from registry.outbound import deadlines
from registry.outbound.addresses import Target, ca_bundle_hint
from registry.outbound.fetch import FetchError, target_checked, user_agent
from registry.outbound.tls import ssl_context

MAX_ANSWER_BYTES = 1024 * 1024
SCHEMES = ("https", "grpc", "grpcs")


def grpc_target(address: str, deadline: float) -> Target:
    """The checked, resolved target of a gRPC address; FetchError when it may not be
    reached (as ``fetch`` refuses a URL)."""
    text = address.strip()
    if "://" not in text:
        text = f"grpcs://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port or 443
    except ValueError:
        raise FetchError("invalid-url", address[:200], f"{address} is no gRPC address.") from None
    if parts.scheme.lower() not in SCHEMES:
        raise FetchError(
            "scheme-not-allowed", address, f"{address} was not called: gRPC is called over TLS."
        )
    if not parts.hostname or "@" in parts.netloc:
        raise FetchError("invalid-url", address, f"{address} has no host, or carries credentials.")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return target_checked(f"https://{host}:{port}/", deadline)


def _pinned(target: Target) -> str:
    # One family's addresses, as grpc's ipv4:/ipv6: schemes take them (it tries each).
    v6 = [a for a in target.addresses if ":" in a]
    v4 = [a for a in target.addresses if ":" not in a]
    if v4:
        return "ipv4:" + ",".join(f"{a}:{target.port}" for a in v4)
    return "ipv6:" + ",".join(f"[{a}]:{target.port}" for a in v6)


def _roots() -> bytes:
    with open(settings.FETCH_CA_BUNDLE or certifi.where(), "rb") as roots:
        return roots.read()


def grpc_channel(target: Target):
    """An asyncio gRPC channel to the checked target's addresses (``grpc_target``)."""
    import grpc

    host = target.host.strip("[]")
    options = [
        ("grpc.ssl_target_name_override", host),
        ("grpc.default_authority", host if target.port == 443 else f"{target.host}:{target.port}"),
        ("grpc.enable_http_proxy", 0),
        ("grpc.enable_retries", 0),
        ("grpc.primary_user_agent", user_agent()),
        ("grpc.max_receive_message_length", MAX_ANSWER_BYTES),
    ]
    credentials = grpc.ssl_channel_credentials(root_certificates=_roots())
    return grpc.aio.secure_channel(_pinned(target), credentials, options=options)


def tls_expiry(target: Target, deadline: float) -> datetime | None:
    """The verified certificate's notAfter, by one TLS handshake with the target's first
    address that answers; FetchError ``tls-error`` when the handshake fails, else
    ``connect-failed`` (or ``timeout``)."""
    url = f"grpcs://{target.host}:{target.port}"
    error: FetchError | None = None
    for address in target.addresses:
        try:
            timeout = deadlines.remaining(deadline)
            if timeout <= 0:
                raise FetchError("timeout", url, f"{url} was not reached in time.")
            with socket.create_connection((address, target.port), timeout=timeout) as raw:
                raw.settimeout(max(deadlines.remaining(deadline), 0.001))
                context = ssl_context(settings.FETCH_CA_BUNDLE or None)
                with context.wrap_socket(raw, server_hostname=target.host.strip("[]")) as tls:
                    not_after = (tls.getpeercert() or {}).get("notAfter")
            return datetime.fromtimestamp(ssl.cert_time_to_seconds(not_after), UTC)
        except ssl.SSLError as exc:
            hint = ca_bundle_hint() if isinstance(exc, ssl.SSLCertVerificationError) else ""
            raise FetchError(
                "tls-error", url, f"the TLS connection to {url} failed ({exc}){hint}."
            ) from None
        except TimeoutError:
            error = FetchError("timeout", url, f"{url} did not answer in time.")
        except OSError as exc:
            error = FetchError("connect-failed", url, f"The connection to {url} failed ({exc}).")
        except (TypeError, ValueError):
            return None
    raise error or FetchError("connect-failed", url, f"{url} has no address.")
