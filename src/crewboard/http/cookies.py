"""The cookie a signed-in browser carries: the web app sets it, and the REST door and the live
streams accept it too."""

from __future__ import annotations

SESSION_COOKIE = "crewboard_session"
