"""REST routes: review (being built)."""

from __future__ import annotations

from crewboard.api.common import Endpoint

ENDPOINTS: tuple[Endpoint, ...] = ()
