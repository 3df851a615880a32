"""Review storage: drafts, proposals, acceptance rules, inbox messages, the activity read."""
