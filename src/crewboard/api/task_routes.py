"""REST routes of the task board (filled in with the board's REST endpoints)."""

from __future__ import annotations

from crewboard.api.common import Endpoint

ENDPOINTS: tuple[Endpoint, ...] = ()
