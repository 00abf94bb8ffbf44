"""Serving cards exactly as published (`/a2a/agents/<id>`, a version's bytes, ETags, the lean
lane's card read), the card's panels and badges on pages, and the cards of agents that are not
publicly listed (`listing`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `versions`."""
