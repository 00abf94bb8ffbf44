from django.dispatch import Signal

# Sent inside the write's transaction after an agent, its endpoints or its
# capabilities change. Arguments: agent, changed (set of field groups: "name",
# "description", "version", "capabilities", "a2a-endpoints", "endpoints"),
# via_card (the write came from an A2A card), base_url. A receiver may raise
# ProblemError to refuse the write; the transaction then rolls back.
agent_changed = Signal()
