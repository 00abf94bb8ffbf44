"""The registry's AI Catalog: its entries (`entries`, written by `services`, read by `reads`),
the paged catalog document (`document`) and its view (`api`), the `Link` header to it
(`middleware`), the ARD settings (`conf`) and the ARD filter language (`query`).

May import: the core (`registry`), the app's contract (`models`, `signals`)."""
