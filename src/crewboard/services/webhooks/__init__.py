"""Outgoing webhooks: subscriptions, the delivery log, and the dispatcher that sends a
project's events from the event log (its outbox) to each subscription."""
