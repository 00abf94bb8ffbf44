"""The Auto Agent Protocol checks: the checklist of a dealer's card (`card_rules`) and manifest
(`manifest_rules`), the JSON Schemas they use (`schema_checks`), the documents checked
(`documents`), the checker that runs them (`checker`) and its report (`report`).

May import: the core (`registry`), the app's contract (`models`, `signals`)."""
