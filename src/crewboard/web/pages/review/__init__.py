"""Review pages: the inbox where a person decides, and the activity stream."""
