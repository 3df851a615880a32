"""Board use cases: tasks, batch changes, notes and outputs, questions, repositories, the week,
and the context pack `get_task` hands an agent.

May use identity, projects and memory; never review (review builds on the board, not the reverse)."""
