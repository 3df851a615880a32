"""Moving whole projects between servers: export archives and their import."""
