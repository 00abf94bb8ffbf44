"""AAP on the web: the check API (`api`), the check page (`pages`) and its form (`forms`), and
the badge panels on agent pages (`panels`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`checks`, `statuses`."""
