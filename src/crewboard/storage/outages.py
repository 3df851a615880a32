"""Telling a database outage from a bug: the one place that knows which driver failures mean
"the database is out of reach (or too busy) for a moment", so every door answers them alike
(503 UNAVAILABLE, retry later) and every background loop backs off instead of dying.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from crewboard.errors import Unavailable

# SQLSTATE classes and codes that say the connection or the server is the problem, not the
# statement: connection exceptions (08…), insufficient resources (53…), the server shutting
# down or starting (57P01-57P03), a bounded wait that ran out (statement, lock and idle in
# transaction timeouts: 57014, 55P03, 25P03).
_OUTAGE_CLASSES = ("08", "53")
_OUTAGE_STATES = {"57P01", "57P02", "57P03", "57014", "55P03", "25P03"}
_SQLITE_BUSY = ("database is locked", "database table is locked")
# The failures of the database layer a door may see escape from a service (outages among
# them): the web app's exception handler is registered for these.
DATABASE_ERRORS: tuple[type[Exception], ...] = (DBAPIError, PoolTimeout)


def is_outage(error: BaseException) -> bool:
    """Whether `error` is the database being unreachable or overloaded rather than a bug."""
    if isinstance(error, PoolTimeout):
        return True
    if not isinstance(error, DBAPIError):
        return False
    sqlstate = getattr(error.orig, "sqlstate", None)
    if error.connection_invalidated:
        outage = True
    elif isinstance(sqlstate, str):
        outage = sqlstate.startswith(_OUTAGE_CLASSES) or sqlstate in _OUTAGE_STATES
    elif isinstance(error, (OperationalError, InterfaceError)):
        # No SQLSTATE: psycopg's own failures (connection refused, closed, lost mid-query);
        # SQLite's only transient ones are its locks.
        outage = _is_pg(error) or str(error.orig).startswith(_SQLITE_BUSY)
    else:
        outage = False
    return outage


def _is_pg(error: DBAPIError) -> bool:
    return type(error.orig).__module__.startswith("psycopg")


def unavailable(error: BaseException) -> Unavailable | None:
    """The refusal a door answers for an outage (None: `error` is something else)."""
    if not is_outage(error):
        return None
    return Unavailable(
        "The server cannot reach its database just now; try again in a moment. A write that "
        "failed this way may or may not have happened: retry it with the same idempotency key.",
        {"retryAfter": Unavailable.retry_after, "cause": type(error).__name__},
    )
