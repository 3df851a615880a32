"""Review use cases: hand-ins (drafts) and decisions, acceptance rules, proposals, the inbox,
messages and the project's activity stream. The top area: it may use every other one."""
