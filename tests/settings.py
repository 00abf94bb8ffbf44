"""The test run's settings: the project's, with a secret key, the public base URL that
Django's test client uses as its host, jobs run eagerly (tests/test_jobs.py runs one through
a real worker), the job engine's files in a temporary folder and no card cache. Set in the
environment, so that commands the tests start in subprocesses get them too."""

import os
import tempfile

# Never the checkout's .env (make run's development environment): the tests' own settings.
os.environ.setdefault("REGISTRY_ENV_FILE", "")
os.environ.setdefault("REGISTRY_BASE_URL", "http://testserver")
os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
os.environ.setdefault("REGISTRY_VAR_DIR", tempfile.mkdtemp(prefix="registry-tests-"))
# Under pytest-xdist each worker (gw0, gw1, ...) inherits the controller's folder: it takes a
# folder of its own inside it (the job queue's files are then the worker's), once, so that
# the commands it starts in subprocesses share the worker's.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker and os.environ.get("REGISTRY_VAR_DIR_WORKER") != _worker:
    os.environ["REGISTRY_VAR_DIR"] = os.path.join(os.environ["REGISTRY_VAR_DIR"], _worker)
    os.makedirs(os.environ["REGISTRY_VAR_DIR"], exist_ok=True)
    os.environ["REGISTRY_VAR_DIR_WORKER"] = _worker
# No card cache (its listening connection would outlive each test's database): the tests
# of the cache switch it on themselves (tests/protocols/a2a/serving/test_card_cache.py).
os.environ.setdefault("CARD_CACHE_MB", "0")
# No DNS lookups of endpoint hosts by the private-endpoint scanner (no network in tests): its
# tests switch it on against the local DNS server (tests/dns_server.py).
os.environ.setdefault("SCAN_RESOLVE_HOSTS", "0")

from registry.settings import *  # noqa: E402, F403
