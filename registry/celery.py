"""The job engine: one Celery app for the registry's background work.

Tasks live in the app that owns the work (``<app>/tasks.py``, found by autodiscovery; the
core's in the room that owns them, ``registry/liveness/tasks.py``, ``registry/access/tasks.py``);
their periodic schedules are registered like any extension (registry.extensions
``register_schedule``) and added to celery beat once the app is finalized. Settings are
Django's, under the ``CELERY_`` prefix (registry/settings/, "Background jobs").
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

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
