"""Storage of the specs area: spec files and their revisions."""
