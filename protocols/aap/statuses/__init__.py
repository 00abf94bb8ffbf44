"""Each dealer agent's stored AAP status: the writes (`services`) and the reads (`selectors`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`checks`."""
