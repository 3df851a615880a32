"""Pure rules and value types: no I/O, no SQLAlchemy, no web framework."""
