"""The webhooks' bounds and queue, from the environment (registry/events/;
docs/guides/mirror.md): a module of their own, as the protocol apps' settings, so the main
one stays short."""

import os

from registry.settings.env import env_int

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
