"""The github area's storage: a project's webhook settings, deliveries seen, issues mirrored
as tasks and the pull request state of task links."""
