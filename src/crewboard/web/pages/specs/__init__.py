"""Web pages of the specs area: spec files and attachments."""
