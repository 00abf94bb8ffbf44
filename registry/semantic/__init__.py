"""Search by meaning: each agent's text embedded at write time by a model shipped inside an
installed package (``embedder``: WordLlama, offline), stored with the model's name and
version (``models.AgentVector``, written by ``vectors`` on ``agents_written``), and the
nearest agents to a query's meaning (``index``: one matrix of every vector, quantized). The
index lives in one process, the embedding service (``service``, ``manage.py
semantic_serve``), which the web workers ask over a Unix socket (``client``), so no worker
holds the model or a copy of every vector; without a socket configured the process embeds
and searches itself (tests, one-process set-ups).

May import: ``agents`` and everything below it.
"""
