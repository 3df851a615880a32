"""Review tools: hand-ins and decisions, proposals and messages, the activity stream."""
