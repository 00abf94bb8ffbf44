"""The test run's settings: the project's, with a secret key, the public base URL that
Django's test client uses as its host, jobs run eagerly (tests/test_jobs.py runs one through a real
worker) and the job engine's files in a temporary folder. Set in the environment, so that
commands the tests start in subprocesses get them too."""

import os
import tempfile

os.environ.setdefault("REGISTRY_BASE_URL", "http://testserver")
os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
os.environ.setdefault("REGISTRY_VAR_DIR", tempfile.mkdtemp(prefix="registry-tests-"))

from registry.settings import *  # noqa: F403
