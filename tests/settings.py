"""The test run's settings: the project's, with the public base URL that Django's test
client uses as its host (set in the environment, so that commands the tests start in
subprocesses get it too)."""

import os

os.environ.setdefault("REGISTRY_BASE_URL", "http://testserver")

from registry.settings import *  # noqa: F403
