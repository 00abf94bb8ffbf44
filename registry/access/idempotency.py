"""Idempotency keys (the IETF ``Idempotency-Key`` header draft) for the writes that create.

A client that sends ``Idempotency-Key: <key>`` with a POST may retry it, with the same key
and body, as often as it likes within ``IDEMPOTENCY_TTL_SECONDS``: the first success is
done once and its answer (status, body, ``Location``) replayed with
``Idempotent-Replayed: true``. The same key with another method, path or body is 422
``idempotency-key-reused``; a retry arriving while the first is still in flight waits for
it up to ``IDEMPOTENCY_WAIT_SECONDS``, then gets 409 ``idempotency-in-progress`` with
``Retry-After``. Keys belong to the API key that sent them; a request without an API key
(refused anyway) or without the header runs as ever. Only successes (2xx) are kept: a
refusal created nothing, so a retry runs again (and may succeed: a fetch that failed).

The records are rows (``models.IdempotentRequest``): in the database, so they hold across
processes and restarts. A kept answer is encrypted with a key derived from the requesting
API key's secret, which the database never holds (it keeps hashes): an answer that carries
a new API key's secret is not readable from the database either. ``idempotency_prune`` (a
job, and ``manage.py idempotency_prune``) removes those past their time.

A view that creates adds it with one decorator on its DRF method::

    from registry.access.idempotency import idempotent

    class SubscriptionListView(APIView):
        @idempotent
        def post(self, request): ...

(the OpenAPI document then lists the header and the 409 and 422 problems).
"""

import base64
import contextlib
import functools
import hashlib
import time
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import DatabaseError, connections, router
from django.http import HttpResponse
from django.utils import timezone

from registry.access.auth import Principal, raw_api_key
from registry.access.models import ApiKey, IdempotentRequest
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

HEADER = "HTTP_IDEMPOTENCY_KEY"
REPLAYED = "Idempotent-Replayed"
KEPT_HEADERS = ("Content-Type", "Location", "ETag")
POLL_SECONDS = 0.05


def idempotency_key_parse(raw: str) -> str:
    """The key of a header value: a structured-field string (``"…"``) or a bare token,
    1 to 255 printable ASCII characters."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not 1 <= len(value) <= 255 or not all(" " <= c <= "~" and c != '"' for c in value):
        raise ProblemError(
            400,
            "validation-error",
            "The Idempotency-Key header must be 1 to 255 printable ASCII characters.",
            [Problem("Idempotency-Key", "must be 1 to 255 printable ASCII characters")],
        )
    return value


def request_fingerprint(method: str, path: str, body: bytes) -> str:
    return hashlib.sha256(f"{method} {path}\n".encode() + body).hexdigest()


def _cipher(raw_api_key: str) -> "Fernet":
    # (cryptography is imported here: its bindings take some 7 MiB that a web worker
    # serving reads never needs.)
    from cryptography.fernet import Fernet

    digest = hashlib.sha256(b"registry idempotent answer\0" + raw_api_key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def replay(record: IdempotentRequest, raw_api_key: str) -> HttpResponse:
    body = _cipher(raw_api_key).decrypt(bytes(record.body))
    response = HttpResponse(body, status=record.status)
    for name, value in record.headers.items():
        response[name] = value
    response[REPLAYED] = "true"
    return response


def idempotency_begin(
    key: ApiKey, raw_api_key: str, idempotency_key: str, fingerprint: str
) -> tuple[IdempotentRequest | None, HttpResponse | None]:
    """Claim the key for this request (the record to finish), or the answer to replay."""
    deadline = time.monotonic() + settings.IDEMPOTENCY_WAIT_SECONDS
    while True:
        now = timezone.now()
        record = _claim(key, idempotency_key, fingerprint, now)
        if record is not None:
            return record, None
        record = IdempotentRequest.objects.filter(key=key, idempotency_key=idempotency_key).first()
        if record is None:  # removed meanwhile (expired, or its request failed): claim it
            continue
        if record.created_at <= now - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS):
            IdempotentRequest.objects.filter(pk=record.pk, created_at=record.created_at).delete()
            continue
        if record.fingerprint != fingerprint:
            raise ProblemError(
                422,
                "idempotency-key-reused",
                "This Idempotency-Key was sent before with another request; a new request "
                "needs a new key.",
                [Problem("Idempotency-Key", "was used for another request")],
            )
        if record.status is not None:
            return None, replay(record, raw_api_key)
        stale = now - timedelta(seconds=settings.IDEMPOTENCY_STALE_SECONDS)
        if record.started_at <= stale:  # its request died with its process: run it again
            taken = IdempotentRequest.objects.filter(
                pk=record.pk, status__isnull=True, started_at=record.started_at
            ).update(started_at=now)
            if taken:
                record.started_at = now
                return record, None
            continue
        if time.monotonic() >= deadline:
            raise ProblemError(
                409,
                "idempotency-in-progress",
                "A request with this Idempotency-Key is still being handled; retry shortly "
                "for its answer.",
                retry_after=1,
            )
        time.sleep(POLL_SECONDS)


def _claim(key: ApiKey, idempotency_key: str, fingerprint: str, now) -> IdempotentRequest | None:
    """The new record of this key, or None when the key has one already: one statement,
    one round trip (``INSERT … ON CONFLICT DO NOTHING RETURNING``).

    On PostgreSQL, outside a transaction, the claim's commit does not wait for the disk
    (``set_config`` in the same statement). Harmless: the request's own writes commit after
    it and flush it with them; a claim lost in a crash had no answer to keep."""
    meta = IdempotentRequest._meta
    conn = connections[router.db_for_write(IdempotentRequest)]
    values = {
        "key_id": key.pk,
        "idempotency_key": idempotency_key,
        "fingerprint": fingerprint,
        "created_at": now,
        "started_at": now,
        "headers": {},
        "body": b"",
    }
    columns = [meta.get_field(name).column for name in values]
    params = [meta.get_field(name).get_db_prep_save(value, conn) for name, value in values.items()]
    unique = [meta.get_field("key").column, meta.get_field("idempotency_key").column]
    source = f"VALUES ({', '.join(['%s'] * len(params))})"
    if conn.vendor == "postgresql" and not conn.in_atomic_block:
        source = (
            f"SELECT {', '.join(['%s'] * len(params))} "  # noqa: S608
            "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous"
        )
    # Every name is the model's, every value a parameter.
    sql = (
        f"INSERT INTO {meta.db_table} ({', '.join(columns)}) {source} "
        f"ON CONFLICT ({', '.join(unique)}) DO NOTHING RETURNING {meta.pk.column}"
    )
    with conn.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return IdempotentRequest(
        pk=row[0], key=key, **{k: v for k, v in values.items() if k != "key_id"}
    )


def idempotency_finish(record: IdempotentRequest, raw_api_key: str, response: HttpResponse) -> None:
    """Keep a success's answer for the retries; forget the key after anything else."""
    if 200 <= response.status_code < 300:
        IdempotentRequest.objects.filter(pk=record.pk).update(
            status=response.status_code,
            headers={name: response[name] for name in KEPT_HEADERS if response.has_header(name)},
            body=_cipher(raw_api_key).encrypt(response.content),
        )
    else:
        _forget(record)


def _forget(record: IdempotentRequest) -> None:
    # Should the database have gone away, the record goes stale and a retry takes it over.
    with contextlib.suppress(DatabaseError):
        IdempotentRequest.objects.filter(pk=record.pk).delete()


def idempotent(handler):
    """A DRF view method that creates: runs once per Idempotency-Key (see the module)."""

    @functools.wraps(handler)
    def run(view, request, *args, **kwargs):
        raw = request.META.get(HEADER)
        if raw is None or not isinstance(request.user, Principal):
            return handler(view, request, *args, **kwargs)
        idempotency_key = idempotency_key_parse(raw)
        if request.user.key is None:
            raise ProblemError(
                400,
                "validation-error",
                "An Idempotency-Key is kept per API key: send it with a key, not a token.",
                [Problem("Idempotency-Key", "needs an API key; a token's requests have none")],
            )
        fingerprint = request_fingerprint(request.method, request.path, request.body)
        secret = raw_api_key(request)
        record, answered = idempotency_begin(request.user.key, secret, idempotency_key, fingerprint)
        if answered is not None:
            return answered
        try:
            response = handler(view, request, *args, **kwargs)
            # Rendered now, as DRF would after this method, so that its bytes can be kept.
            response = view.finalize_response(request, response, *args, **kwargs)
            if hasattr(response, "render"):
                response.render()
        except BaseException:
            _forget(record)
            raise
        idempotency_finish(record, secret, response)
        return response

    run.idempotent = True  # the OpenAPI document lists the header (registry.schema)
    return run


def idempotency_prune() -> int:
    """Remove the records past IDEMPOTENCY_TTL_SECONDS; how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotentRequest.objects.filter(created_at__lte=cutoff).delete()
    return deleted
