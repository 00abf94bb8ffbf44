"""New rows in bulk at the database's pace: PostgreSQL's COPY for the bulk writes (imports,
crawls, the benchmark's load), ``bulk_create`` elsewhere; and changed rows in bulk through
COPY too (``objects_update``), ``bulk_update`` elsewhere."""

import operator
import time
from collections.abc import Sequence

from django.db import connections, models, router, transaction

# Fields whose attribute is already the value the database takes: no per-value conversion.
_AS_IS = {
    "BigIntegerField",
    "BinaryField",
    "BooleanField",
    "CharField",
    "DateTimeField",
    "EmailField",
    "FloatField",
    "IntegerField",
    "PositiveIntegerField",
    "PositiveSmallIntegerField",
    "SlugField",
    "SmallIntegerField",
    "TextField",
    "URLField",
    "UUIDField",
}


def objects_insert(
    objs: Sequence[models.Model],
    *,
    batch_size: int = 1000,
    ignore_conflicts: bool = False,
    unique_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
) -> None:
    """Insert new instances of one model, all at once, as ``bulk_create`` with the same
    conflict arguments would.

    On PostgreSQL ``COPY ... FROM STDIN``: no SQL text to compile and no literals to quote
    per value, which is where ``bulk_create`` spends its time on thousands of rows. With a
    conflict to ignore or update, the rows are copied into a temporary table first and moved
    by one ``INSERT ... SELECT ... ON CONFLICT``. An auto-incremented primary key is left
    to the database and not set on the instances (callers that need it use
    ``bulk_create``). Elsewhere ``bulk_create``. No signals are sent either way."""
    if not objs:
        return
    model = type(objs[0])
    db = router.db_for_write(model)
    connection = connections[db]
    if connection.vendor != "postgresql":
        model.objects.using(db).bulk_create(
            objs,
            batch_size=batch_size,
            ignore_conflicts=ignore_conflicts,
            update_conflicts=bool(update_fields),
            unique_fields=unique_fields or None,
            update_fields=update_fields or None,
        )
        return
    meta, quote = model._meta, connection.ops.quote_name
    fields = [
        f
        for f in meta.concrete_fields
        if not (f.primary_key and f.get_internal_type().endswith("AutoField"))
    ]
    # The fields taken as they are first, read by one attrgetter per row; then the others.
    fields.sort(key=lambda field: not _as_is(field))
    getters = _row_getter(fields, connection)
    columns = ", ".join(quote(f.column) for f in fields)
    table = quote(meta.db_table)
    if not (ignore_conflicts or update_fields):
        with connection.cursor() as cursor:
            _copy(connection, cursor, table, columns, objs, getters)
    else:
        with transaction.atomic(using=db), connection.cursor() as cursor:
            staged = quote(f"staged_{meta.db_table}")
            cursor.execute(f"DROP TABLE IF EXISTS {staged}")
            # Names quoted from the model's meta, never from input.
            cursor.execute(
                f"CREATE TEMPORARY TABLE {staged} ON COMMIT DROP AS "  # noqa: S608
                f"SELECT {columns} FROM {table} WITH NO DATA"
            )
            _copy(connection, cursor, staged, columns, objs, getters)
            conflict = _conflict_clause(meta, quote, unique_fields, update_fields)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {staged} {conflict}"  # noqa: S608
            )
            cursor.execute(f"DROP TABLE {staged}")
    for obj in objs:
        obj._state.adding = False
        obj._state.db = db


def objects_update(objs: Sequence[models.Model], fields: Sequence[str]) -> None:
    """Write ``fields`` (attribute names) of existing instances of one model, as
    ``bulk_update`` does. On PostgreSQL the values are copied into a temporary table and set
    by one ``UPDATE ... FROM`` joined on the primary key: ``bulk_update``'s ``CASE`` per
    column compares each row with every other of its batch, which on thousands of rows
    takes longer than all the rest of their write."""
    if not objs:
        return
    model = type(objs[0])
    db = router.db_for_write(model)
    connection = connections[db]
    if connection.vendor != "postgresql":
        model.objects.using(db).bulk_update(objs, fields, batch_size=500)
        return
    meta, quote = model._meta, connection.ops.quote_name
    written = [meta.pk, *(meta.get_field(name) for name in fields)]
    written.sort(key=lambda field: not _as_is(field))  # as _row_getter reads them
    columns = ", ".join(quote(f.column) for f in written)
    table, staged = quote(meta.db_table), quote(f"changed_{meta.db_table}")
    sets = ", ".join(
        f"{quote(f.column)} = s.{quote(f.column)}" for f in written if not f.primary_key
    )
    pk = quote(meta.pk.column)
    with transaction.atomic(using=db), connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {staged}")
        # Names quoted from the model's meta, never from input.
        cursor.execute(
            f"CREATE TEMPORARY TABLE {staged} ON COMMIT DROP AS "  # noqa: S608
            f"SELECT {columns} FROM {table} WITH NO DATA"
        )
        _copy(connection, cursor, staged, columns, objs, _row_getter(written, connection))
        cursor.execute(
            f"UPDATE {table} SET {sets} FROM {staged} s WHERE {table}.{pk} = s.{pk}"  # noqa: S608
        )
        cursor.execute(f"DROP TABLE {staged}")


def rows_insert(model: type[models.Model], fields: Sequence[str], rows: Sequence[tuple]) -> None:
    """Insert new rows of ``model`` given as tuples of ``fields`` (attribute names; each
    value already what the database takes), with no instance per row: for the bulk writes
    of small rows, thousands per batch (tags, facts). Elsewhere than PostgreSQL the
    instances are made and saved by ``bulk_create``."""
    if not rows:
        return
    db = router.db_for_write(model)
    connection = connections[db]
    if connection.vendor != "postgresql":
        model.objects.using(db).bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows], batch_size=1000
        )
        return
    meta, quote = model._meta, connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in fields)
    with connection.cursor() as cursor:
        _copy(connection, cursor, quote(meta.db_table), columns, rows, None)


def _conflict_clause(meta, quote, unique_fields, update_fields) -> str:
    if not update_fields:
        return "ON CONFLICT DO NOTHING"
    target = ", ".join(quote(meta.get_field(name).column) for name in unique_fields)
    changes = ", ".join(
        f"{quote(column)} = EXCLUDED.{quote(column)}"
        for column in (meta.get_field(name).column for name in update_fields)
    )
    return f"ON CONFLICT ({target}) DO UPDATE SET {changes}"


def _copy(connection, cursor, table, columns, objs, getters) -> None:
    sql = f"COPY {table} ({columns}) FROM STDIN"
    began = time.monotonic()
    with cursor.cursor.copy(sql) as copy:
        if getters is None:  # rows already
            for row in objs:
                copy.write_row(row)
        else:
            for obj in objs:
                copy.write_row(getters(obj))
    if connection.queries_logged:  # counted as the statement it is
        connection.queries_log.append(
            {"sql": f"{sql} -- {len(objs)} rows", "time": f"{time.monotonic() - began:.3f}"}
        )


def _as_is(field: models.Field) -> bool:
    """Whether the field's attribute is already what the database takes."""
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return False
    internal = field.target_field.get_internal_type() if field.is_relation else None
    return (internal or field.get_internal_type()) in _AS_IS


def _row_getter(fields: list[models.Field], connection):
    """A function of an instance to its row: the fields taken as they are (first in
    ``fields``) by one ``attrgetter``, the others each converted as ``bulk_create`` would."""
    plain = [f.attname for f in fields if _as_is(f)]
    converted = [_value_getter(f, connection) for f in fields if not _as_is(f)]
    read = operator.attrgetter(*plain) if plain else (lambda obj: ())
    if len(plain) == 1:
        one = read
        read = lambda obj: (one(obj),)  # noqa: E731
    if not converted:
        return read
    return lambda obj: (*read(obj), *[get(obj) for get in converted])


def _value_getter(field: models.Field, connection):
    attname = field.attname
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return lambda obj: field.get_db_prep_save(field.pre_save(obj, True), connection)
    return lambda obj: field.get_db_prep_save(getattr(obj, attname), connection)
