"""Artifact pages: the list, one artifact's revisions and files, a file diff, a sandboxed preview."""
