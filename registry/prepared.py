"""Cursors for the hottest statements, which PostgreSQL prepares once per connection."""


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
