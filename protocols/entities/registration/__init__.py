"""Entities registered and read: the writes (`services`), bulk registration and the reads
(`selectors`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `servers`."""
