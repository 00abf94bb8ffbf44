"""Moderation's settings, from the environment (docs/operations/moderation.md): admission
review, the scanners' verdicts, reports and the blocklist's retroactive quarantine."""

import os

from django.core.exceptions import ImproperlyConfigured

from registry.settings.env import env_bool, env_float, env_int, env_list

# Adding a blocklist entry quarantines the agents it matches, in a job: at most this many
# per entry (the count found is reported on the entry).
BLOCKLIST_QUARANTINE_MAX = env_int("BLOCKLIST_QUARANTINE_MAX", 10000)
# The verdict of each scanner's findings, rule=verdict (block, review or note), for the
# rules whose own default should change (registry.moderation.rules).
SCAN_VERDICTS = env_list("SCAN_VERDICTS", "")
# Names that an agent's name may not imitate with look-alike characters (confusable-name).
SCAN_BRANDS = env_list(
    "SCAN_BRANDS",
    "OpenAI,Anthropic,Google,Microsoft,Amazon,Apple,Meta,PayPal,Stripe,GitHub,Salesforce,"
    "Slack,Shopify,Visa,Mastercard,Coinbase,Binance",
)
# An agent's texts longer than this in all (characters) are an oversized card, as are texts
# of 2,000 characters or more that compress to a twelfth of their length (oversized-card).
SCAN_TEXT_MAX_CHARS = env_int("SCAN_TEXT_MAX_CHARS", 60000)
# private-endpoint asks DNS for each endpoint host's addresses (a name that resolves to a
# loopback, private or link-local address is flagged), within this many seconds per write's
# host; a name that does not resolve is a note (unresolved-endpoint).
SCAN_RESOLVE_HOSTS = env_bool("SCAN_RESOLVE_HOSTS", True)
SCAN_DNS_TIMEOUT = env_float("SCAN_DNS_TIMEOUT", 2.0)
# A bulk write (an import, a crawl's batch) asks for its agents' hosts side by side, this
# many at a time, before its agents are scanned: a batch waits about one timeout for its
# slowest names, not one per name.
SCAN_DNS_CONCURRENCY = env_int("SCAN_DNS_CONCURRENCY", 32)
# open: every agent is listed as written (scanners' review findings are warnings); review:
# new agents, and changes a scanner flags for review, wait for a moderator's approval.
REGISTRY_ADMISSION = os.environ.get("REGISTRY_ADMISSION", "open")
if REGISTRY_ADMISSION not in ("open", "review"):
    raise ImproperlyConfigured(
        f"REGISTRY_ADMISSION must be open or review, not {REGISTRY_ADMISSION!r}"
    )
# Under review: owners whose writes are admitted without review.
ADMISSION_TRUSTED_OWNERS = env_list("ADMISSION_TRUSTED_OWNERS", "")
# Under review: an owner with a verified domain claim skips review for the agents on it.
ADMISSION_TRUST_CLAIMED_DOMAINS = env_bool("ADMISSION_TRUST_CLAIMED_DOMAINS", True)
# Reports (POST /agents/<id>/reports): this many open reports from distinct reporters
# quarantine the agent pending review (0: never); reports an address may send an hour.
REPORTS_QUARANTINE_AT = env_int("REPORTS_QUARANTINE_AT", 3)
REPORTS_PER_ADDRESS_HOUR = env_int("REPORTS_PER_ADDRESS_HOUR", 10)
