"""What one web page shows when it spans areas (the board and task pages, the inbox, project
settings), each gathered by one call. Only the web door imports these; no area imports them."""
