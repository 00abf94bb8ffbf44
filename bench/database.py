"""The bench database: dropped and created afresh for every run, so it must be a bench one."""

from pathlib import Path

import dj_database_url


class BenchError(Exception):
    """The run cannot go on (bad option, server down, unexpected answers)."""


def database_config(url: str) -> dict:
    config = dj_database_url.parse(url)
    engine = config["ENGINE"]
    name = str(config.get("NAME") or "")
    if engine not in ("django.db.backends.postgresql", "django.db.backends.sqlite3"):
        raise BenchError(f"--database-url must be PostgreSQL or SQLite, not {engine}")
    # The run destroys the database it is given: only ever one meant for it.
    if "bench" not in Path(name).name:
        raise BenchError(f"refusing to drop the database {name!r}: its name must contain 'bench'")
    return config


def database_reset(url: str) -> None:
    """Drop and create the PostgreSQL database, or delete the SQLite file."""
    config = database_config(url)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        path = Path(config["NAME"])
        path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    import psycopg
    from psycopg import sql

    connection = psycopg.connect(
        host=config.get("HOST") or None,
        port=config.get("PORT") or None,
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    )
    with connection:
        name = sql.Identifier(config["NAME"])
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        connection.execute(sql.SQL("CREATE DATABASE {}").format(name))
