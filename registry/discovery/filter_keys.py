"""The agents' filter keys (``AgentFilterKeys``) refreshed once at the end of a bulk write.

PostgreSQL's triggers (migrations 0022 and 0024) refresh an agent's keys after every
statement that writes its row, capabilities, tags or facts: a bulk load's batch, one
statement a table, refreshed each of its agents four times over, three of them updates of
the keys' row and GIN index. Inside ``filter_keys_at_end()`` the triggers note the agents
instead, and they are refreshed once, by one statement, when the block ends (inside the
write's transaction: nothing reads the keys of an uncommitted agent meanwhile). The search
vector's trigger does the same with the words it adds to the search words (migration 0026):
the block's agents' words are added once, at its end. Elsewhere than PostgreSQL, or outside
a transaction, the block changes nothing.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS, connections

PENDING = "registry_filterkeys_pending"
SETTING = "registry.filterkeys_deferred"

_inside: ContextVar[bool] = ContextVar("filter_keys_at_end", default=False)


@contextmanager
def filter_keys_at_end(using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """Refresh the filter keys of the agents written inside once, at the end (nested: the
    outermost's end); nothing when a step raises (the transaction rolls back). Use it
    inside the write's transaction, around all of its steps."""
    connection = connections[using]
    if _inside.get() or connection.vendor != "postgresql" or not connection.in_atomic_block:
        yield
        return
    with connection.cursor() as cursor:
        # Dropped at the commit; the setting is the transaction's alone (set_config's
        # third argument), undone by a rollback to a savepoint as by the transaction's.
        cursor.execute(f"CREATE TEMPORARY TABLE {PENDING} (agent_id uuid NOT NULL) ON COMMIT DROP")
        cursor.execute("SELECT set_config(%s, 'on', true)", [SETTING])
    token = _inside.set(True)
    try:
        yield
    finally:
        _inside.reset(token)
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, 'off', true)", [SETTING])
        # The noted agents read once; their keys and their words (a constant name).
        cursor.execute(
            "SELECT registry_filterkeys_refresh(ids), registry_searchwords_of(ids) "  # noqa: S608
            f"FROM (SELECT ARRAY(SELECT DISTINCT agent_id FROM {PENDING}) AS ids) AS noted"
        )
        cursor.execute(f"DROP TABLE {PENDING}")
