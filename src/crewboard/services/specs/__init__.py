"""Services of the specs area: spec files (and, next, attachments and comment threads)."""
