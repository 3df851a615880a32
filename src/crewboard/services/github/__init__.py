"""The github area: a project's webhook settings and the deliveries GitHub sends it."""
