"""Prometheus metrics at `/metrics` (CREWBOARD_METRICS=on), from a registry of the app's own.

Requests are counted where each door dispatches them, once per door: the MCP server's
middleware (a JSON-RPC request, the tool's name for `tools/call`), REST's `json_route` (the
operation an endpoint serves) and the request middleware for the web app (the route's path
template). Labels stay bounded: operation and route names, never a raw path or an id.

The gauges are read when Prometheus scrapes: the connection pool and the live streams from
memory, the backlogs (spec session turns, the email outbox, the event log after this node's
live broker) with one statement, waited on for at most SCRAPE_DATABASE_WAIT seconds. A
database that does not answer leaves those series out and sets
`crewboard_scrape_database_ok` to 0: the rest of the page is still served.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from crewboard.errors import ErrorCode
from crewboard.services.gauges import read_backlog
from crewboard.services.live import Broker
from crewboard.services.supervisor import DatabaseProbe
from crewboard.storage.database import Database

log = logging.getLogger(__name__)

OK = "ok"
INTERNAL = "internal"
# The outcomes a request is counted under: ok, or its error code (internal for a bug).
OUTCOMES = frozenset({OK, *(code.value for code in ErrorCode if code != ErrorCode.INTERNAL)})
# Seconds: from a millisecond (a no-op tool) to half a minute (a long spec session wait).
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SCRAPE_DATABASE_WAIT = 2.0  # seconds a scrape waits for the backlog counts

Record = Callable[[str, str, float], None]  # (operation, outcome, seconds)


class Metrics:
    """The app's series and how a door records a request in them.

    `door(name)` gives a door its recorder: a label lookup in a dict of cached children
    (`.labels()` runs once per new combination), then an increment and an observation."""

    def __init__(self, db: Database, broker: Broker) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "crewboard_requests",
            "Requests each door answered, by operation and outcome (ok or the error code).",
            ("door", "operation", "outcome"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "crewboard_request_duration_seconds",
            "Seconds from a request's dispatch to its answer, by door and operation.",
            ("door", "operation"),
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.gauges = Gauges(db, broker)
        self.registry.register(self.gauges)

    def door(self, door: str) -> Record:
        """The recorder of one door's requests."""
        counts: dict[tuple[str, str], Any] = {}
        times: dict[str, Any] = {}
        requests, latency = self.requests, self.latency

        def record(operation: str, outcome: str, seconds: float) -> None:
            counter = counts.get((operation, outcome))
            if counter is None:
                counter = counts[operation, outcome] = requests.labels(door, operation, outcome)
            histogram = times.get(operation)
            if histogram is None:
                histogram = times[operation] = latency.labels(door, operation)
            counter.inc()
            histogram.observe(seconds)

        return record

    def page(self) -> bytes:
        """The text exposition format of every series."""
        return generate_latest(self.registry)


def outcome_of_code(code: object) -> str:
    """An error code as an outcome label; INTERNAL, or anything unknown, counts as internal."""
    return code if isinstance(code, str) and code in OUTCOMES else INTERNAL


class Gauges(Collector):
    """The collector-time gauges. `refresh()` (awaited by the scrape) reads the database's
    part; `collect()` reports it with what memory knows."""

    def __init__(self, db: Database, broker: Broker) -> None:
        self.db = db
        self.broker = broker
        self.backlog: dict[str, int] | None = None
        # One read at a time, as /readyz pings: a scrape made while the last read is still
        # out waits on that one (a hung database holds one worker thread, not one a scrape).
        self.reader = DatabaseProbe(db, SCRAPE_DATABASE_WAIT, ask=self._read)

    def _read(self) -> dict[str, int]:
        return read_backlog(self.db, self.broker.cursor if self.broker.started else None)

    async def refresh(self) -> None:
        """Count the backlogs, waiting at most SCRAPE_DATABASE_WAIT seconds; None when the
        database did not answer in time or failed."""
        problem = await self.reader.check()
        if problem is not None:
            log.debug("metrics: no backlog counts (%s)", problem)
        self.backlog = None if problem is not None else self.reader.answer

    def collect(self) -> Iterator[Metric]:
        yield from self._pool()
        streams = GaugeMetricFamily(
            "crewboard_live_streams_open",
            "Live event streams (SSE) open on this node, by kind (web: the web app's own).",
            labels=["kind"],
        )
        web = sum(1 for sub in list(self.broker.subscriptions) if sub.claim.web)
        streams.add_metric(["web"], web)
        streams.add_metric(["api"], len(self.broker.subscriptions) - web)
        yield streams
        yield from self._backlog()

    def _pool(self) -> Iterator[Metric]:
        use = self.db.pool_use()
        if use is None:  # a pool that keeps no such counts
            return
        size, checked_out = use
        yield GaugeMetricFamily(
            "crewboard_db_pool_size",
            "The pool's size: connections it keeps for reuse (more open as overflow).",
            value=size,
        )
        yield GaugeMetricFamily(
            "crewboard_db_pool_checked_out",
            "Pool connections in use now (above the size: overflow connections).",
            value=checked_out,
        )

    def _backlog(self) -> Iterator[Metric]:
        backlog = self.backlog
        yield GaugeMetricFamily(
            "crewboard_scrape_database_ok",
            "1 when this scrape's database counts came back in time, else 0 (and the "
            "backlog series are left out).",
            value=0 if backlog is None else 1,
        )
        if backlog is None:
            return
        turns = GaugeMetricFamily(
            "crewboard_session_turns",
            "Spec session turns waiting for a runner (queued) or being run (running), on "
            "every node.",
            labels=["state"],
        )
        turns.add_metric(["queued"], backlog["turns_queued"])
        turns.add_metric(["running"], backlog["turns_running"])
        yield turns
        yield GaugeMetricFamily(
            "crewboard_email_outbox_pending",
            "Emails in the outbox not sent yet (still being tried), on every node.",
            value=backlog["emails_pending"],
        )
        if "events_behind" in backlog:
            yield GaugeMetricFamily(
                "crewboard_live_events_behind",
                "Events in the log this node's live broker has not handed to its streams yet "
                "(counted up to 10000).",
                value=backlog["events_behind"],
            )


def metrics_route(metrics: Metrics, token: str | None) -> Route:
    """GET /metrics: open, or only with `Authorization: Bearer <token>` when one is set."""
    expected = f"Bearer {token}".encode() if token else None

    async def serve_metrics(request: Request) -> Response:
        if expected is not None:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                return PlainTextResponse(
                    "Send the metrics token as `Authorization: Bearer <token>`.",
                    status_code=401,
                    headers={"www-authenticate": 'Bearer realm="crewboard-metrics"'},
                )
        await metrics.gauges.refresh()
        return Response(
            metrics.page(),
            media_type=CONTENT_TYPE_LATEST,
            headers={"cache-control": "no-store"},
        )

    return Route("/metrics", serve_metrics, methods=["GET"])
