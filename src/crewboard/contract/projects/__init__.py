"""Projects tools: projects and workspaces, the state page, the team."""
