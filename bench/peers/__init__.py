"""`python -m bench peers`: Crewboard side by side with Backlog.md and task-master-ai over MCP.

See "The peers workload" in bench/README.md.
"""
