"""identity."""
