"""Projects use cases: projects, workspaces, the state page, the team, and the first start."""
