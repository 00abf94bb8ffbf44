# The job engine's app, loaded with Django so that @shared_task binds to it.
from registry.celery import app as celery_app

__all__ = ["celery_app"]
