"""REST routes of review: hand-ins and decisions, proposals, messages and activity."""
