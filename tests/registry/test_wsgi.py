"""The WSGI module that gunicorn serves."""

import gc
import importlib


def test_the_wsgi_module_freezes_start_up_objects_out_of_the_collectors_reach():
    gc.unfreeze()
    import registry.wsgi

    importlib.reload(registry.wsgi)
    try:
        assert callable(registry.wsgi.application)
        # The views are imported, and start-up's objects frozen: full collections skip them.
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


# Imported where a signature, token or sealed secret is checked, a name looked up in the DNS
# or a document checked against a JSON Schema, never by a worker that serves reads: PyJWT
# and cryptography's bindings, dnspython and jsonschema take some 19 MiB of each worker.
ON_DEMAND_MODULES = (
    "jwt",
    "cryptography.hazmat.bindings._rust",
    "cryptography.fernet",
    "dns.resolver",
    "jsonschema",
)

WORKER_START = """
import sys
import registry.wsgi
from django.urls import URLResolver, get_resolver

def walk(resolver):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            walk(pattern)

walk(get_resolver())
print(",".join(name for name in %r if name in sys.modules) or "none")
"""


def test_a_web_worker_imports_what_only_writes_need_when_it_writes():
    from tests.registry.test_security_settings import manage

    run = manage("shell", "-c", WORKER_START % (ON_DEMAND_MODULES,), DEBUG="1")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "none"
