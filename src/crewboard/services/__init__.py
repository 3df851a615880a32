"""Use cases: each runs in one transaction, checks permission through `access`, records events.

Naming (after zulip's actions): `access_*` is a permission-checked lookup, `check_*` validates,
`do_*` changes state inside a caller's unit of work and records the event; the plain verb
(`create_project`) is the use case a door calls with the database.
"""
