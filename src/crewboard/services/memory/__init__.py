"""Memory use cases: accepted records and project documents, their versions, edits by people.

May use identity and projects; never board or review."""
