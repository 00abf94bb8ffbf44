"""The queue relay: A2A calls to an agent behind an AMQP queue (`service`), the broker
connection (`broker`), the relay's answers besides the SDK's (`answers`), the relayed tasks
(`store`), the replies' consumer (`consumer`) and the demo's queue agent (`queue_agent`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `versions`, `serving`, `registration`, `face`."""
