"""Memory storage: accepted records and project documents with their versions."""
