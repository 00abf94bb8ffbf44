"""What changed, pushed: the outbox of CloudEvents written in each change's transaction
(``outbox``, ``envelope``, ``models.Event``), liveness status changes noticed by a sweep
(``liveness``), webhook subscriptions with their verification handshake (``subscriptions``),
signed deliveries with retries (``delivery``, ``tasks``), their views (``api``), and the
``GET /events`` stream (``stream``: replay and filtering; ``asgi``: the async server).

May import every room below it: ``discovery``, ``liveness``, ``agents`` and what they may.
"""
