"""The handoffs area: shift handoffs and their action items."""
