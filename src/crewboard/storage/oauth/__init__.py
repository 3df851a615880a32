"""Storage of the oauth area."""
