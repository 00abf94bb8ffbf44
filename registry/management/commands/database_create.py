"""Create the PostgreSQL database DATABASE_URL names, if it does not exist yet."""

from django.core.management.base import BaseCommand, CommandError
from django.db import connections


class Command(BaseCommand):
    help = (
        "Create the database of DATABASE_URL when it is PostgreSQL and missing (make run "
        "and make migrate do this before migrating); SQLite needs nothing."
    )

    def handle(self, *args, **options):
        connection = connections["default"]
        if connection.vendor != "postgresql":
            return
        import psycopg
        from psycopg import sql

        name = connection.settings_dict["NAME"]
        params = connection.get_connection_params()
        for private in ("prepare_threshold", "cursor_factory", "context", "options"):
            params.pop(private, None)
        params.update(dbname=name, connect_timeout=10)
        try:
            psycopg.connect(**params).close()
            return  # it exists: nothing to do, and no other database is touched
        except psycopg.OperationalError:
            pass
        try:
            with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as admin:
                found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
                if found.fetchone():
                    return
                admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.Error as exc:
            raise CommandError(
                f"The database {name!r} does not exist and could not be created ({exc}). "
                "Create it (createdb), or give DATABASE_URL a user that may."
            ) from None
        self.stdout.write(f"Created the database {name!r}.")
