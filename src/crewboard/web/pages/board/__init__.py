"""Board pages: the board with its columns, one task's page, and the week."""
