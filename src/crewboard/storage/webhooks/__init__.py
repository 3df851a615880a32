"""Storage of outgoing webhooks: subscriptions and their delivery log."""
