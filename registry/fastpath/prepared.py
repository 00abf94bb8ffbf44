"""Cursors for the hottest statements, which PostgreSQL prepares once per connection."""

from datetime import UTC, datetime, timedelta

from django.db import DatabaseError


def prepared_cursor(db, *, binary: bool = False):
    """A cursor on ``db`` (a connection, not the ``connection`` proxy, whose every
    attribute is a lookup). On PostgreSQL one that binds parameters on the server, so
    psycopg prepares the statement after its DB_PREPARE_THRESHOLD-th run on a connection
    and PostgreSQL no longer parses and plans it every request (other queries keep
    Django's default, client-side binding); with ``binary``, results arrive in binary
    (bytes as bytes, not hex text). Wrapped by Django as any cursor: query counts and logs
    see it."""
    if db.vendor != "postgresql":
        return db.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor
    from psycopg.pq import Format

    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    with db.wrap_database_errors:
        cursor = ServerBindingCursor(db.connection)
        if binary:
            cursor.format = Format.BINARY
    return db.make_debug_cursor(cursor) if db.queries_logged else db.make_cursor(cursor)


class PreparedReadError(DatabaseError):
    """PostgreSQL refused a prepared read (its connection is broken, most likely)."""


# A binary timestamp(tz) is microseconds since this moment (UTC).
POSTGRES_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def postgres_timestamp(value: bytes) -> datetime:
    """A timestamptz as ``prepared_row`` returns it (binary), as an aware datetime."""
    return POSTGRES_EPOCH + timedelta(microseconds=int.from_bytes(value, "big", signed=True))


def postgres_timestamp_bytes(value: datetime) -> bytes:
    """An aware datetime as a binary timestamptz parameter."""
    return ((value - POSTGRES_EPOCH) // _MICROSECOND).to_bytes(8, "big", signed=True)


_MICROSECOND = timedelta(microseconds=1)


# SQLSTATE invalid_sql_statement_name: the statement is gone. psycopg deallocates every
# prepared statement of a connection (DEALLOCATE ALL) after a rollback, ours with its own.
_STATEMENT_GONE = b"26000"


def _exec_named(pgconn, prepared: set, name: str, sql: str, params, types, formats):
    """Run the statement prepared as ``name`` (outside a transaction), preparing it first
    when this connection has not, or no longer has, it."""
    from psycopg import pq

    for _attempt in range(2):
        if name not in prepared:
            result = pgconn.prepare(name.encode(), sql.encode(), types)
            if result.status != pq.ExecStatus.COMMAND_OK:
                return result
            prepared.add(name)
        result = pgconn.exec_prepared(name.encode(), params, formats, 1)
        if result.error_field(pq.DiagnosticField.SQLSTATE) != _STATEMENT_GONE:
            return result
        prepared.discard(name)
    return result


def prepared_row(db, name: str, sql: str, params: list[bytes]) -> tuple | None:
    """The first row of a read on PostgreSQL, through libpq itself: ``sql`` (with ``$1``
    … placeholders) prepared once per connection as ``name``, the parameters sent and the
    values returned in binary (bytes each; the caller decodes them). Spends a fraction of
    the CPU of a Django cursor (no wrapper, adaptation or result objects), for the one
    read that decides the card fetch's throughput. Logged like any query when Django
    records queries (DEBUG, the tests' query counts)."""
    rows = prepared_rows(db, name, sql, params, first=True)
    return rows[0] if rows else None


def prepared_rows(
    db,
    name: str,
    sql: str,
    params: list[bytes | None],
    types: list[int] | None = None,
    *,
    first: bool = False,
) -> list[tuple]:
    """prepared_row's every row (``first``: the first only), for a statement that may
    also write (in autocommit, it commits as it ends). ``types``: the parameters' type
    OIDs where PostgreSQL cannot infer them (0: infer); a None parameter is NULL."""
    import time

    from psycopg import pq

    db.close_if_health_check_failed()
    db.ensure_connection()
    connection = db.connection
    pgconn = connection.pgconn
    prepared = connection.__dict__.setdefault("registry_prepared", set())
    started = time.monotonic() if db.queries_logged else 0.0
    formats = [1] * len(params)
    with db.wrap_database_errors:  # psycopg's errors as Django's, and the connection flagged
        if db.in_atomic_block:
            # Inside a transaction a missing statement would abort it: unnamed, parsed now.
            result = pgconn.exec_params(sql.encode(), params, types, formats, 1)
        else:
            result = _exec_named(pgconn, prepared, name, sql, params, types, formats)
    if result.status != pq.ExecStatus.TUPLES_OK:
        db.errors_occurred = True
        raise PreparedReadError(result.get_error_message())
    if db.queries_logged:
        db.queries_log.append(
            {"sql": f"EXECUTE {name} /* {sql} */", "time": f"{time.monotonic() - started:.3f}"}
        )
    count = min(result.ntuples, 1) if first else result.ntuples
    columns = range(result.nfields)
    get_value = result.get_value
    return [tuple(get_value(row, column) for column in columns) for row in range(count)]
