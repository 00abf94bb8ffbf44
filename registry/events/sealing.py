"""Webhook secrets at rest: stored encrypted (Fernet: AES-128-CBC with an HMAC-SHA256), so
that a copy of the database alone cannot sign deliveries as the registry.

The key is ``WEBHOOK_SECRET_KEY`` (one or more Fernet keys, comma-separated: the first seals,
each opens, so a key can be rotated), or by default a key derived from ``SECRET_KEY``
(HKDF-SHA256). The keys derived from ``SECRET_KEY`` and ``SECRET_KEY_FALLBACKS`` always open
too: setting ``WEBHOOK_SECRET_KEY`` later, or rotating ``SECRET_KEY`` with its old value in
the fallbacks, loses no secret (``manage.py webhook_secrets_reseal`` seals every one again
with the current key).
"""

import base64
import functools
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

# cryptography is imported where a secret is sealed or opened: its bindings take some 7 MiB
# that a web worker serving reads never needs.

_INFO = b"a2a-registry webhook secrets"


def key_derive(secret_key: str) -> bytes:
    """The Fernet key derived from a Django ``SECRET_KEY``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(
        secret_key.encode()
    )
    return base64.urlsafe_b64encode(raw)


@functools.cache
def _fernet(explicit: str, secret_key: str, fallbacks: tuple[str, ...]) -> "MultiFernet":
    from cryptography.fernet import Fernet, MultiFernet

    keys = []
    for key in (k.strip() for k in explicit.split(",") if k.strip()):
        try:
            keys.append(Fernet(key))
        except ValueError:
            raise ImproperlyConfigured(
                "WEBHOOK_SECRET_KEY must be Fernet keys (32 url-safe base64-encoded bytes, "
                "comma-separated): make one with `python -c 'from cryptography.fernet import "
                "Fernet; print(Fernet.generate_key().decode())'`"
            ) from None
    keys += [Fernet(key_derive(k)) for k in (secret_key, *fallbacks) if k]
    return MultiFernet(keys)


def fernet() -> "MultiFernet":
    return _fernet(
        settings.WEBHOOK_SECRET_KEY,
        settings.SECRET_KEY,
        tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ())),
    )


def secret_seal(secret: str) -> str:
    return fernet().encrypt(secret.encode()).decode()


def secret_open(sealed: str) -> str:
    """The secret a sealed value holds; ImproperlyConfigured when no key opens it (the key
    that sealed it is gone from the settings)."""
    from cryptography.fernet import InvalidToken

    try:
        return fernet().decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise ImproperlyConfigured(
            "A webhook secret cannot be opened with WEBHOOK_SECRET_KEY or SECRET_KEY (and "
            "its fallbacks): the key that sealed it is missing from the settings."
        ) from None


def secret_reseal(sealed: str) -> str:
    """The secret sealed again with the current first key."""
    return fernet().rotate(sealed.encode()).decode()
