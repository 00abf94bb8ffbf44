"""The PostgreSQL session settings every connection of the registry opens with: no JIT, and
parallel workers as DB_PARALLEL_WORKERS says (none unless set)."""

import pytest
from django.db import connection

from tests.registry.test_security_settings import manage

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

SHOW = (
    "from django.db import connection\n"
    "with connection.cursor() as c:\n"
    "    c.execute('SHOW max_parallel_workers_per_gather')\n"
    "    print(c.fetchone()[0])\n"
)


def _show(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


def test_a_connection_starts_no_parallel_workers_and_no_jit():
    assert _show("max_parallel_workers_per_gather") == "0"
    assert _show("jit") == "off"


def test_db_parallel_workers_sets_the_workers_a_statement_may_use():
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    run = manage("shell", "-c", SHOW, DATABASE_URL=url, DB_PARALLEL_WORKERS="2", DEBUG="1")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "2"
