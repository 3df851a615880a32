"""The artifacts area's tables and repository."""
