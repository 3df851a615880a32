"""REST routes of the board: tasks, the week, notes, outputs and questions."""
