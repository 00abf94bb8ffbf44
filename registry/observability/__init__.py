"""What an operator sees of the registry: the request id and count of every request Django
answers (``requests``: the lean lane counts its own), the jobs' ids and counts (``jobs``:
Celery's signals) and ``GET /metrics`` (``scrape``: every process's counts added up, with
the registry's gauges read at scrape time). The series themselves and the request ids are
``registry.http``'s (``metrics``, ``request_ids``), so every room below counts its own.

May import: every room below (``http`` … ``events``) and the contract.
"""
