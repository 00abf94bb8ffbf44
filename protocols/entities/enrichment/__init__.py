"""What an entity's website adds: its Schema.org and Open Graph markup (`markup`,
`categories`), the enrichment of a stored entity (`enrich`) and the crawl of registered
domains (`crawl`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `servers`, `registration`."""
