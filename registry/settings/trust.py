"""The trust score's weights and bounds, from the environment (registry/trust/;
docs/reference/trust.md): a module of their own, as the webhooks' settings."""

import os

from django.core.exceptions import ImproperlyConfigured

from registry.settings.env import env_int

# Each signal's weight in the score (registry/trust/scoring.py): "name:weight" pairs, comma
# separated; a signal left out keeps its default weight, a weight of 0 leaves it out.
TRUST_WEIGHTS_DEFAULT = {
    "verifiedDomain": 20,
    "signedCard": 10,
    "tls": 10,
    "conformance": 20,
    "taskProbe": 15,
    "uptime": 15,
    "age": 5,
    "crawlHistory": 10,
    "entityLevel": 10,
    "verifiedPublisher": 15,
    "openReports": 10,
}


def _weights(name: str) -> dict[str, int]:
    weights = dict(TRUST_WEIGHTS_DEFAULT)
    for item in os.environ.get(name, "").split(","):
        if not item.strip():
            continue
        signal, _, weight = item.partition(":")
        try:
            value = int(weight)
        except ValueError:
            value = -1
        if not signal.strip() or value < 0 or value > 1000:
            raise ImproperlyConfigured(
                f"{name} must list name:weight pairs (weights 0 to 1000), got {item.strip()!r}"
            )
        weights[signal.strip()] = value
    return weights


TRUST_WEIGHTS = _weights("TRUST_WEIGHTS")
# Time in the registry counts in full after TRUST_AGE_FULL_DAYS; a certificate in full while
# it has TRUST_TLS_FULL_DAYS or more to run; conformance, uptime and crawl history are taken
# over the probes of the last TRUST_HISTORY_DAYS.
TRUST_AGE_FULL_DAYS = env_int("TRUST_AGE_FULL_DAYS", 90)
TRUST_TLS_FULL_DAYS = env_int("TRUST_TLS_FULL_DAYS", 30)
TRUST_HISTORY_DAYS = env_int("TRUST_HISTORY_DAYS", 30)
# How often the job recomputes every agent's score (the signals that change with time alone:
# age, certificate expiry, history windows); a write or a probe recomputes its agents' at once.
TRUST_REFRESH_SECONDS = env_int("TRUST_REFRESH_SECONDS", 86400)

# The task probe (protocols/a2a/registration/task_probe.py): a real A2A request to an agent
# (a harmless SendMessage naming the registry, then GetTask), which may make it act: "off",
# "opt-in" (the agents whose owner set taskProbe: true) or "all"; at most once an agent's
# endpoint every TRUST_TASK_PROBE_INTERVAL_SECONDS, each within TRUST_TASK_PROBE_SECONDS.
TRUST_TASK_PROBE = os.environ.get("TRUST_TASK_PROBE", "") or "opt-in"
if TRUST_TASK_PROBE not in ("off", "opt-in", "all"):
    raise ImproperlyConfigured(
        f"TRUST_TASK_PROBE must be off, opt-in or all, got {TRUST_TASK_PROBE!r}"
    )
TRUST_TASK_PROBE_INTERVAL_SECONDS = env_int("TRUST_TASK_PROBE_INTERVAL_SECONDS", 86400)
TRUST_TASK_PROBE_SECONDS = env_int("TRUST_TASK_PROBE_SECONDS", 15)
