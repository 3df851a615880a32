"""The github area's operations: a project's GitHub webhook settings."""
