"""The protocol apps' settings, from the environment: A2A (probes' re-import, signature
re-checks, its agent's tasks), the queue relay, AAP and entity cards."""

import os

from registry.settings.env import env_bool, env_int, env_list

# A probe that finds an agent's card changed where it was registered from (by domain or
# URL) re-imports it when it validates (signed cards only when the signature verifies).
A2A_PROBE_REIMPORT = env_bool("A2A_PROBE_REIMPORT", False)
# How often every signed card is verified again (a2a.tasks.signatures_recheck): keys rotate.
A2A_SIGNATURE_RECHECK_INTERVAL_SECONDS = env_int("A2A_SIGNATURE_RECHECK_INTERVAL_SECONDS", 86400)
# The tasks of the registry's own A2A agent (a discovery or registration each) are kept this
# long after their last change, for GetTask and ListTasks; the hourly job removes older ones.
A2A_TASK_RETENTION_SECONDS = env_int("A2A_TASK_RETENTION_SECONDS", 86400)
# The queue relay (protocols.a2a.relay; docs/guides/queue-agent.md): its broker, reply and
# dead-letter queues, the wait for an answer, Retry-After when the broker refuses, retention.
QUEUE_RELAY_BROKER_URL = os.environ.get(
    "QUEUE_RELAY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//"
)
QUEUE_RELAY_REPLY_QUEUE = os.environ.get("QUEUE_RELAY_REPLY_QUEUE", "registry.a2a.replies")
# The dead-letter queue keeps at most DEAD_LETTER_MAX_LENGTH replies (the oldest dropped);
# its name changed with the cap (RabbitMQ keeps a queue's arguments as first declared).
QUEUE_RELAY_DEAD_LETTER_QUEUE = os.environ.get(
    "QUEUE_RELAY_DEAD_LETTER_QUEUE", "registry.a2a.dead-letters"
)
QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH = env_int("QUEUE_RELAY_DEAD_LETTER_MAX_LENGTH", 10000)
# Queue names no relayed endpoint may name (besides the reply, dead-letter, webhook and
# "celery" queues): the registry's and the job engine's, and the broker's own (amq.).
QUEUE_RELAY_RESERVED_PREFIXES = env_list("QUEUE_RELAY_RESERVED_PREFIXES", "registry.,celery,amq.")
QUEUE_RELAY_WAIT_SECONDS = env_int("QUEUE_RELAY_WAIT_SECONDS", 10)
QUEUE_RELAY_RETRY_AFTER_SECONDS = env_int("QUEUE_RELAY_RETRY_AFTER_SECONDS", 30)
QUEUE_RELAY_TASK_RETENTION_SECONDS = env_int("QUEUE_RELAY_TASK_RETENTION_SECONDS", 7 * 86400)
# Relayed tasks made without credentials (anyone may make them): at most ANONYMOUS_TASKS_MAX
# open (not final) at once in all (503 past it) and ANONYMOUS_TASKS_PER_CLIENT an hour per
# client address (429), nothing stored or published past either; unanswered ones are removed
# after ANONYMOUS_TASK_RETENTION_SECONDS (the hourly relay-tasks-expire job).
QUEUE_RELAY_ANONYMOUS_TASKS_MAX = env_int("QUEUE_RELAY_ANONYMOUS_TASKS_MAX", 1000)
QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT = env_int("QUEUE_RELAY_ANONYMOUS_TASKS_PER_CLIENT", 60)
QUEUE_RELAY_ANONYMOUS_TASK_RETENTION_SECONDS = env_int(
    "QUEUE_RELAY_ANONYMOUS_TASK_RETENTION_SECONDS", 3600
)
# The caller's headers forwarded to the agent (A2A-*, Authorization) are held to
# HEADER_MAX_BYTES each and HEADERS_MAX_BYTES in all (a 400 problem past one, nothing sent):
# an AMQP message's headers must fit in one of the broker's frames (RabbitMQ: 128 KiB).
QUEUE_RELAY_HEADER_MAX_BYTES = env_int("QUEUE_RELAY_HEADER_MAX_BYTES", 8192)
QUEUE_RELAY_HEADERS_MAX_BYTES = env_int("QUEUE_RELAY_HEADERS_MAX_BYTES", 32768)
# Relayed calls that wait for their agent's reply (protocols.a2a.relay.waits; a call past a
# limit is refused before anything is sent, with Retry-After). In the web processes a
# waiting call holds a worker: WEB_WAITS in all on the machine (keep it below the number of
# workers; 0: a waiting call is refused there, route /a2a/queue/ to the async server,
# docs/guides/relay-waiting.md) and WEB_WAITS_PER_CLIENT per client address.
QUEUE_RELAY_WEB_WAITS = env_int("QUEUE_RELAY_WEB_WAITS", 1)
QUEUE_RELAY_WEB_WAITS_PER_CLIENT = env_int("QUEUE_RELAY_WEB_WAITS_PER_CLIENT", 1)
# In the async server (registry.events.asgi, where a wait holds no worker): ASYNC_WAITS in
# all in the process, ASYNC_WAITS_PER_CLIENT per client address.
QUEUE_RELAY_ASYNC_WAITS = env_int("QUEUE_RELAY_ASYNC_WAITS", 500)
QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT = env_int("QUEUE_RELAY_ASYNC_WAITS_PER_CLIENT", 20)
# How often the AAP statuses are recomputed from the stored cards (aap.tasks.aap_refresh).
AAP_REFRESH_INTERVAL_SECONDS = env_int("AAP_REFRESH_INTERVAL_SECONDS", 3600)

# Entity cards (entities/): how often a known domain's card is fetched again (each domain
# at its own time within a quarter of this either way, or after its Cache-Control max-age),
# how often the crawl job looks for due domains, and how many it fetches per run.
ENTITY_CRAWL_INTERVAL_SECONDS = env_int("ENTITY_CRAWL_INTERVAL_SECONDS", 86400)
ENTITY_CRAWL_TICK_SECONDS = env_int("ENTITY_CRAWL_TICK_SECONDS", 600)
ENTITY_CRAWL_BATCH = env_int("ENTITY_CRAWL_BATCH", 500)
# EDP provider registrations (POST /v1/provider/register): up to PROVIDER_REGISTER_NOW
# entities are registered within the request; more, up to PROVIDER_REGISTER_MAX, are a job
# (202 and a status URL) that a worker runs, so no request holds a web worker for long.
PROVIDER_REGISTER_NOW = env_int("PROVIDER_REGISTER_NOW", 10)
PROVIDER_REGISTER_MAX = env_int("PROVIDER_REGISTER_MAX", 1000)
# Each agent's newest CARD_VERSIONS_KEEP card versions are kept (0: all; a daily prune job).
CARD_VERSIONS_KEEP = max(0, env_int("CARD_VERSIONS_KEEP", 0))
# GET /agents/<id>/versions/<a>/diff/<b>: an answer longer than VERSION_DIFF_MAX_BYTES
# (default 256 KiB) leaves out the JSON Patch (then the changes too) and says "truncated":
# true; answers are kept in Django's cache for VERSION_DIFF_CACHE_SECONDS (versions never
# change), so a diff is computed once, not per request.
VERSION_DIFF_MAX_BYTES = max(1024, env_int("VERSION_DIFF_MAX_BYTES", 256 * 1024))
VERSION_DIFF_CACHE_SECONDS = max(0, env_int("VERSION_DIFF_CACHE_SECONDS", 86400))
# Cards registered by domain/URL are fetched again this often (or after the source's max-age).
AGENT_REFRESH_INTERVAL_SECONDS = env_int("AGENT_REFRESH_INTERVAL_SECONDS", 86400)
