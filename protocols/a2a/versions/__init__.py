"""Every card version an agent had: recording and pruning them, the dry run of a write, the
semantic diff between two versions and the `/agents/<id>/versions` views.

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`."""
