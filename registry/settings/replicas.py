"""Read replicas: PostgreSQL streaming replicas of ``DATABASE_URL`` that take the public
reads (``registry.fastpath.replicas``); writes, and the reads of a caller who wrote
moments ago, stay on the primary."""

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from registry.settings.env import env_float, env_int, env_list


def replica_settings(databases: dict) -> dict:
    """The replicas' settings from the environment (read after the checkout's ``.env``),
    their entries added to ``databases`` (Django's DATABASES) as ``replica1``, ``replica2``
    …, and the router that sends reads to them when there are any."""
    # One URL a replica, comma-separated.
    urls = env_list("DATABASE_REPLICA_URLS")
    databases.update(replica_databases(databases["default"], urls))
    return {
        "DATABASE_REPLICA_URLS": urls,
        # A replica further behind than this many seconds takes no reads until it catches up.
        "DATABASE_REPLICA_MAX_LAG_SECONDS": env_float("DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0),
        # How often a process looks at each replica's replay position (and whether it answers).
        "DATABASE_REPLICA_CHECK_SECONDS": env_float("DATABASE_REPLICA_CHECK_SECONDS", 1.0),
        # How long a caller's reads are held to its last write's WAL position.
        "DATABASE_READ_YOUR_WRITES_SECONDS": env_int("DATABASE_READ_YOUR_WRITES_SECONDS", 60),
        "DATABASE_ROUTERS": ["registry.fastpath.replicas.ReplicaRouter"] if urls else [],
    }


def replica_databases(primary: dict, urls: list[str]) -> dict[str, dict]:
    """Django's DATABASES entries of the replicas, with the primary's options; none on
    SQLite (a replica is PostgreSQL's)."""
    if not urls:
        return {}
    if primary["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URLS needs a PostgreSQL DATABASE_URL")
    databases = {}
    for number, url in enumerate(urls, start=1):
        replica = dj_database_url.parse(
            url,
            conn_max_age=primary["CONN_MAX_AGE"],
            conn_health_checks=primary["CONN_HEALTH_CHECKS"],
        )
        if replica["ENGINE"] != "django.db.backends.postgresql":
            raise ImproperlyConfigured(f"DATABASE_REPLICA_URLS: replica {number} is not PostgreSQL")
        replica["OPTIONS"] = dict(primary.get("OPTIONS", {}))
        # A replica that does not answer is skipped: a connection waits for it briefly.
        replica["OPTIONS"].setdefault("connect_timeout", 2)
        # Tests read the primary's test database through the alias (no copy of its own).
        replica["TEST"] = {"MIRROR": "default"}
        databases[f"replica{number}"] = replica
    return databases
