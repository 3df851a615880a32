"""Storage of the notifications area: notifications, the email outbox, settings."""
