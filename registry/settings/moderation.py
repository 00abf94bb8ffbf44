"""Moderation's settings, from the environment (docs/operations/moderation.md): admission
review, the scanners' verdicts, reports and the blocklist's retroactive quarantine."""

from registry.settings.env import env_int

# Adding a blocklist entry quarantines the agents it matches, in a job: at most this many
# per entry (the count found is reported on the entry).
BLOCKLIST_QUARANTINE_MAX = env_int("BLOCKLIST_QUARANTINE_MAX", 10000)
