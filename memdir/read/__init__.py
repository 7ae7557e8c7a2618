"""The read path: recall (which memories bear on a task) and the context a session starts with."""
