"""Webhook pages: a project's webhooks under its settings, each with its delivery log."""
