"""Board tools: tasks, batch changes, notes and outputs, questions, repositories, the week."""
