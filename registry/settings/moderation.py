"""Moderation's settings, from the environment (docs/operations/moderation.md): admission
review, the scanners' verdicts, reports and the blocklist's retroactive quarantine."""

from registry.settings.env import env_int, env_list

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
