"""How long a node waits on PostgreSQL: the timeouts and keepalives of its connections, and
the long transactions that lift some of them for themselves."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

# Seconds a long write (an import, a migration) may sit between two statements: its Python
# work between them is far shorter, and a node cut off in the middle still lets go of its
# locks within a minute.
LONG_IDLE_S = 60.0


@dataclass(frozen=True)
class Waits:
    """How long a node waits on PostgreSQL before it gives up, in seconds (0: no limit, for
    the three server-side timeouts). The defaults are the settings' (`Settings.db_*`).

    A node cut off from the database must not hold what other nodes wait for: its open
    transaction (and the row locks in it) ends `idle_in_transaction` seconds after its last
    statement, the server ends a statement after `statement`, and a statement waiting for a
    lock gives up after `lock`. On the node's side `connect` bounds a new connection, and TCP
    keepalives and `tcp_user_timeout` notice a peer that went silent.
    """

    connect: float = 5.0
    statement: float = 60.0
    lock: float = 10.0
    idle_in_transaction: float = 5.0
    keepalives_idle: float = 5.0
    keepalives_interval: float = 2.0
    keepalives_count: int = 3
    tcp_user_timeout: float = 10.0
    pool_recycle: float = 1800.0
    # Shown in pg_stat_activity; "" gives crewboard:<host name>:<process id>.
    application_name: str = ""

    def libpq_params(self) -> dict[str, Any]:
        """These waits as libpq connection parameters (what psycopg.connect takes)."""
        server = {
            "statement_timeout": _ms(self.statement),
            "lock_timeout": _ms(self.lock),
            "idle_in_transaction_session_timeout": _ms(self.idle_in_transaction),
            # The server's side of the socket too: it notices a node gone silent (a real
            # partition) even while that node's session is idle, and ends the session.
            "tcp_keepalives_idle": max(1, round(self.keepalives_idle)),
            "tcp_keepalives_interval": max(1, round(self.keepalives_interval)),
            "tcp_keepalives_count": max(1, self.keepalives_count),
            "tcp_user_timeout": _ms(self.tcp_user_timeout),
        }
        options = " ".join(f"-c {name}={value}" for name, value in server.items())
        name = self.application_name or f"crewboard:{socket.gethostname()}:{os.getpid()}"
        return {
            "connect_timeout": max(1, round(self.connect)),
            "keepalives": 1,
            "keepalives_idle": max(1, round(self.keepalives_idle)),
            "keepalives_interval": max(1, round(self.keepalives_interval)),
            "keepalives_count": max(1, self.keepalives_count),
            "tcp_user_timeout": _ms(self.tcp_user_timeout),
            "application_name": name[:63],  # PostgreSQL keeps 63 bytes (NAMEDATALEN - 1)
            "options": options,
        }


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def relax_waits(conn: Connection, *, idle_in_transaction: float = 0.0, lock: bool = False) -> None:
    """Lift the statement timeout of `conn`'s transaction on PostgreSQL (SET LOCAL: it ends
    with the transaction), and give it `idle_in_transaction` seconds (0: no limit) between
    statements instead of the node's few; with `lock`, no lock timeout either.

    For the long operations: an export or a backup snapshot (read-only: it holds no row
    lock, and a backup's transaction waits for pg_dump), an archive import and the
    migrations (writes, so they keep a bound between statements). A no-op on SQLite."""
    if conn.dialect.name != "postgresql":
        return
    conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
    conn.exec_driver_sql(
        f"SET LOCAL idle_in_transaction_session_timeout = {_ms(idle_in_transaction)}"
    )
    if lock:
        conn.exec_driver_sql("SET LOCAL lock_timeout = 0")
