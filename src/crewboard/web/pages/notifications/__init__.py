"""Web pages of the notifications room: the person's notifications and their settings."""
