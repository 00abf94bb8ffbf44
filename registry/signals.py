"""Signals the core sends; protocol apps receive them (the arrows point inward).

``agent_changed``: sent inside the write's transaction after an agent, its endpoints or
its capabilities changed. Arguments:
- ``agent``: the agent;
- ``changed``: the parts that changed: "name", "description", "version", "capabilities",
  "endpoints", and "endpoints:<protocol>" for each protocol whose endpoints changed
  (e.g. "endpoints:A2A");
- ``writer``: who wrote: "registry" for native writes (API, admin, commands), else the
  label of the app whose service wrote (e.g. "a2a" when a card was registered), so that
  an app can tell its own writes from others';
- ``created``: the write created the agent.
A receiver may raise ProblemError to refuse the write; the transaction then rolls back.
Bulk writes (``registry.services.agents_bulk_create``) send it once per agent.
"""

from django.dispatch import Signal

agent_changed = Signal()

NATIVE_WRITER = "registry"
