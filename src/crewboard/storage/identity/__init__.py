"""Identity storage: the users, API token and web session tables and their repositories."""
