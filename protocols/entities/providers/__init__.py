"""Providers that publish many entities at once: their registration (`services`) and their
import jobs (`jobs`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `servers`, `registration`."""
