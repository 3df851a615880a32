"""Board storage: tasks and everything on them (links, labels, events, notes, outputs,
questions, repositories) and context receipts."""
