"""ARD search: the reads behind it (`selectors`), the search itself (`search`), the `/ard/`
views (`api`), its lean lane (`lean`) and the A2A skill that answers ARD queries (`skills`).
 May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`catalog`, `crawl`."""
