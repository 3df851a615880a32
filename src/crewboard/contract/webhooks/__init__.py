"""Webhook operations: a project's outgoing webhooks and their delivery log, for its admins."""
