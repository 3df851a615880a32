"""Counting failed attempts per key in a sliding window: the web sign-in's throttle, and (with
its own limits) the OAuth client registration's."""

from __future__ import annotations

import threading
import time
from collections import deque


class LoginThrottle:
    """At most LIMIT failed sign-ins per email and per client address in WINDOW seconds.

    In memory, per node: behind several nodes each counts its own attempts, which still bounds
    guessing to LIMIT × nodes per window.
    """

    LIMIT = 10
    WINDOW = 15 * 60.0

    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        stamps = self._failures.setdefault(key, deque())
        while stamps and stamps[0] <= now - self.WINDOW:
            stamps.popleft()
        return stamps

    def retry_after(self, *keys: str) -> int:
        """Seconds until another attempt is allowed for these keys (0: allowed now)."""
        now = time.monotonic()
        with self._lock:
            waits = [
                int(stamps[0] + self.WINDOW - now) + 1
                for key in keys
                if len(stamps := self._recent(key, now)) >= self.LIMIT
            ]
        return max(waits, default=0)

    def failed(self, *keys: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in keys:
                self._recent(key, now).append(now)

    def succeeded(self, email_key: str) -> None:
        with self._lock:
            self._failures.pop(email_key, None)
