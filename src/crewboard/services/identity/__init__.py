"""Identity use cases: people, API tokens, web sessions, and access (what a caller may open and do)."""
