"""PostgreSQL: the query words' tsquery (``registry_search_query``, migration 0026) worked out
once a statement, by the planner, instead of at every row that a scan checks.

Declared STABLE, the function was called again for every row that a statement checked
outside its index: each row of a bitmap scan's recheck and each row of a walk along the
creation-order index (a first page of a common word, where the newest agents match soon),
some 30 µs a call (a look-up in the words table). A page of ``q=busines&tag=documents`` at
100,000 agents walked 2,534 rows in 80 ms, where the same walk with the tsquery as a
constant took 2.7 ms. Declared IMMUTABLE, the planner calls it once, as it simplifies the
statement, and plans with the constant it returns (its estimate of the matches is the same:
the planner evaluated the STABLE call for that too): 300 distinct text queries in process
at 100,000 agents, their SQL 6.24 / 4.10 -> 3.75 / 3.24 ms at the median (two runs each;
bench/README.md, "The words worked out once").

IMMUTABLE is a promise that PostgreSQL keeps a result wherever it folded a call with
constant arguments: in a plan it caches (a prepared statement, a PL/pgSQL body), an index,
a view. None holds one: the registry's statements bind their words on the client
(``registry/settings``: only the card read binds on the server, and it has no words), so
each statement that calls it is planned anew with its own words, and sees every word
committed before it (the table only grows; ``tests/registry/discovery/test_search_words.py``
searches a word before and after an agent brings it). A statement that bound its words on
the server would still be right: a plan made for its values folds them for that run only,
and a generic plan, made without them, calls the function as it runs (at every row checked
again: slower, never wrong)."""

import importlib

from django.db import migrations

# Migration 0022's runner of PostgreSQL's statements.
_postgres = importlib.import_module("registry.migrations.0022_agent_filter_keys")._postgres

FORWARD = ["ALTER FUNCTION registry_search_query(text[]) IMMUTABLE"]
BACKWARD = ["ALTER FUNCTION registry_search_query(text[]) STABLE"]


class Migration(migrations.Migration):
    dependencies = [("registry", "0026_search_words")]

    operations = [migrations.RunPython(_postgres(FORWARD), _postgres(BACKWARD))]
