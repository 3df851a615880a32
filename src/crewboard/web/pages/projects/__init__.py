"""Project pages: the state page, the team, and the project's settings and workspaces."""
