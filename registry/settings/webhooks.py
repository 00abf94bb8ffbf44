"""Change events, the event stream and the webhooks (their retries, bounds and queue), from
the environment (registry/events/; docs/guides/mirror.md): a module of their own, as the
protocol apps' settings, so the main one stays short."""

import os

from registry.settings.env import env_float, env_int

# Change events (registry/events/, docs/guides/mirror.md): the outbox keeps each event
# EVENTS_RETENTION_DAYS; the sweep (webhook retries, liveness status changes) runs every
# EVENTS_SWEEP_SECONDS; the stream server looks for expired liveness graces every
# EVENTS_LIVENESS_WATCH_SECONDS; EVENTS_STREAM_URL is where the stream server answers /events
# (the web process then redirects there; empty: it streams itself); a client (an API key,
# else an address) may hold EVENTS_STREAMS_PER_CLIENT streams open per process, the process
# EVENTS_STREAMS_MAX in all (0: no limit). Webhooks are retried from
# WEBHOOK_RETRY_FIRST_SECONDS, doubling with jitter, for WEBHOOK_RETRY_MAX_SECONDS at most.
# Webhook secrets are stored encrypted with WEBHOOK_SECRET_KEY (a Fernet key; default: one
# derived from SECRET_KEY).
EVENTS_RETENTION_DAYS = env_int("EVENTS_RETENTION_DAYS", 7)
EVENTS_SWEEP_SECONDS = env_int("EVENTS_SWEEP_SECONDS", 15)
EVENTS_LIVENESS_WATCH_SECONDS = env_float("EVENTS_LIVENESS_WATCH_SECONDS", 1.0)
EVENTS_STREAM_URL = os.environ.get("EVENTS_STREAM_URL", "").rstrip("/")
EVENTS_STREAMS_PER_CLIENT = env_int("EVENTS_STREAMS_PER_CLIENT", 20)
EVENTS_STREAMS_MAX = env_int("EVENTS_STREAMS_MAX", 2000)
WEBHOOK_SECRET_KEY = os.environ.get("WEBHOOK_SECRET_KEY", "")
WEBHOOK_RETRY_FIRST_SECONDS = env_int("WEBHOOK_RETRY_FIRST_SECONDS", 5)
WEBHOOK_RETRY_MAX_SECONDS = env_int("WEBHOOK_RETRY_MAX_SECONDS", 24 * 3600)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
WEBHOOK_CONCURRENCY = env_int("WEBHOOK_CONCURRENCY", 8)

# Webhook bounds (registry/events/): an owner may start WEBHOOK_VERIFY_PER_OWNER_HOUR
# handshakes an hour (a new subscription, a new URL, switching one on again; then 429), have
# WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER of them and WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER
# subscriptions being sent to at once (the others wait their turn), and queue again
# WEBHOOK_REDELIVER_MAX events a redelivery request (then 400), WEBHOOK_REDELIVER_PER_OWNER_HOUR
# an hour (then 429); 0: no limit. The webhook jobs (handshakes, deliveries) run on the Celery
# queue WEBHOOK_QUEUE, apart from the other jobs (Procfile: the webhooks worker).
WEBHOOK_VERIFY_PER_OWNER_HOUR = env_int("WEBHOOK_VERIFY_PER_OWNER_HOUR", 30)
WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER = env_int("WEBHOOK_VERIFY_IN_FLIGHT_PER_OWNER", 2)
WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER = env_int("WEBHOOK_DELIVER_IN_FLIGHT_PER_OWNER", 2)
WEBHOOK_REDELIVER_MAX = env_int("WEBHOOK_REDELIVER_MAX", 1000)
WEBHOOK_REDELIVER_PER_OWNER_HOUR = env_int("WEBHOOK_REDELIVER_PER_OWNER_HOUR", 5000)
WEBHOOK_QUEUE = os.environ.get("WEBHOOK_QUEUE", "") or "webhooks"
CELERY_TASK_ROUTES = {
    "registry.events.tasks.webhooks_dispatch": {"queue": WEBHOOK_QUEUE},
    "registry.events.tasks.subscription_verify": {"queue": WEBHOOK_QUEUE},
}
