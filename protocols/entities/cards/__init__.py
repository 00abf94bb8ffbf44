"""Entity cards as documents: their validation (JSON Schema), the text, facts and opening hours
they carry, the sources (A2E, EDP) they come from, their signatures and verification, and
fetching them through the safe fetcher.

May import: the core (`registry`), the app's contract (`models`, `signals`)."""
