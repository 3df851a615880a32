"""Projects storage: workspaces, projects and members, the state page, team roles."""
