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
