"""The job engine: one Celery app for the registry's background work.

Tasks live in the app that owns the work (``<app>/tasks.py``, found by autodiscovery; the
core's in the room that owns them, ``registry/liveness/tasks.py``, ``registry/access/tasks.py``);
their periodic schedules are registered like any extension (registry.extensions
``register_schedule``) and added to celery beat once the app is finalized. Settings are
Django's, under the ``CELERY_`` prefix (registry/settings/, "Background jobs").
"""

import contextlib
import logging
import os
from pathlib import Path

from celery import Celery
from celery.beat import PersistentScheduler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

logger = logging.getLogger(__name__)

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The core's own jobs live in its rooms (the apps' in ``<app>/tasks.py``).
app.autodiscover_tasks(
    [
        "registry.liveness",
        "registry.access",
        "registry.agents",
        "registry.events",
        "registry.semantic",
        "registry.trust",
        "registry.moderation",
    ]
)


@app.on_after_finalize.connect
def schedules_add(sender: Celery, **kwargs) -> None:
    from registry import extensions

    for schedule in extensions.schedules.read():
        sender.add_periodic_task(
            schedule.seconds, sender.signature(schedule.task), name=schedule.name
        )


# Jobs run once however many nodes run a scheduler: the one that holds this lock sends
# them, the others look again every LEADER_WAIT_SECONDS (and take over when it stops).
LEADER_LOCK = (0x72656769, 0x62656174)  # an advisory lock's two keys: "regi", "beat"
LEADER_WAIT_SECONDS = 5.0


class SchedulerLead:
    """Whether this scheduler sends the jobs: it holds PostgreSQL's advisory lock on a
    connection of its own (given back when the process or its connection dies), or, on
    SQLite (one machine), a lock on a file in VAR_DIR."""

    def __init__(self):
        self.connection = None
        self.holding = False
        self.file = None

    def held(self) -> bool:
        from django.db import connections

        db = connections["default"]
        return self._database(db) if db.vendor == "postgresql" else self._file()

    def _database(self, db) -> bool:
        import psycopg

        from registry.fastpath.notices import own_connection_params

        try:
            if self.connection is None or self.connection.closed or self.connection.broken:
                self.holding = False
                self.connection = psycopg.connect(
                    autocommit=True, connect_timeout=3, **own_connection_params(db)
                )
            if self.holding:  # still held while its connection answers
                self.connection.execute("SELECT 1")
                return True
            row = self.connection.execute("SELECT pg_try_advisory_lock(%s, %s)", LEADER_LOCK)
            self.holding = bool(row.fetchone()[0])
        except Exception as exc:
            logger.warning("The scheduler cannot hold its lock: %s", exc)
            self.release()
        return self.holding

    def _file(self) -> bool:
        import fcntl

        from django.conf import settings

        if self.file is None:
            Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)
            self.file = open(Path(settings.VAR_DIR) / "beat.lock", "a")  # noqa: SIM115
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        if self.holding and self.connection is not None:
            # Given back now (closing alone frees it once the server notices).
            with contextlib.suppress(Exception):
                self.connection.execute("SELECT pg_advisory_unlock(%s, %s)", LEADER_LOCK)
        for held in (self.connection, self.file):
            if held is not None:
                with contextlib.suppress(Exception):
                    held.close()
        self.connection = self.file = None
        self.holding = False


class LeaderScheduler(PersistentScheduler):
    """Celery beat's scheduler that sends the jobs only while it leads (``SchedulerLead``):
    one scheduler a node may run, exactly one sends."""

    def __init__(self, *args, **kwargs):
        self.lead = SchedulerLead()
        self.leading = False
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        leading = self.lead.held()
        if leading != self.leading:
            logger.info("This scheduler %s the jobs.", "sends" if leading else "no longer sends")
            self.leading = leading
        if not leading:
            return LEADER_WAIT_SECONDS
        return min(super().tick(*args, **kwargs), LEADER_WAIT_SECONDS)

    def close(self):
        super().close()
        self.lead.release()


app.conf.beat_scheduler = "registry.celery:LeaderScheduler"
