"""How far to trust a listing: each agent's trust score (0-100) and its signals, kept at
write time and by a daily job, never computed by a read. The signals are an extension
point (``registry.extensions.register_trust_signal``): the core measures what its probes
and rows show (``measures``: conformance, uptime, TLS, time in the registry, crawl
history), the apps what they know (a verified domain, a signed card, an entity's level).
``scoring``: the weights and the formula; ``services``: the recomputation of some agents
(on every ``agents_written``, after a batch of probes) and of all (``tasks``, ``manage.py
trust_recompute``), with the score-band facts discovery counts.

May import: ``discovery``, ``semantic``, ``liveness``, ``agents`` and everything below.
"""
