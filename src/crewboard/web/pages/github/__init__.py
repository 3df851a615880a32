"""Web pages of the github area."""
