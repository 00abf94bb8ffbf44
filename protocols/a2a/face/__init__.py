"""The registry as an A2A agent: the SDK server's executor and request handler (`agent`), the
skills it answers (`skills`), ListTasks's parameter checks (`list_params`, the queue relay's
too), its task store and the lean path of discovery messages.

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `versions`, `serving`, `registration`."""
