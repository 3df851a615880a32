"""The `crewboard` command line for operators and scripts."""
