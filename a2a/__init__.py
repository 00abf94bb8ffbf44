"""The registry's A2A app: card validation, mapping and the A2A-facing views.

It shares the import name ``a2a`` with the a2a-sdk package. ``extend_path``
adds the SDK's directory to this package's path, so ``a2a.types``,
``a2a.client`` and ``a2a.utils`` resolve to the SDK while the app's own
modules (found first) resolve here. The SDK's top-level ``__init__`` holds
only a docstring, so nothing is lost by not running it.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
