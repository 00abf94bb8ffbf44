"""A2A cards as documents: their validation (the SDK's parse, the checks and the descriptor
walker, the text formats), their mapping to the core's agent model, the signatures on them
(JWS), the stored documents and the reads of agents with cards.

May import: the core (`registry`), the app's contract (`models`, `signals`)."""
