"""Attach the MCP door to the app: the /mcp route, its metadata, and its session manager."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from crewboard.config import Settings
from crewboard.contract.catalogue import Catalogue, default_catalogue
from crewboard.http.metrics import Record
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.mcp.exchange import SingleExchange
from crewboard.mcp.http import (
    METADATA_PATH,
    ROOT_METADATA_PATH,
    McpFront,
    protected_resource_metadata,
)
from crewboard.mcp.server import build_server
from crewboard.storage.database import Database


class McpDoor:
    """Routes for the app and the session manager its lifespan must run."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        catalogue: Catalogue | None = None,
        *,
        record: Record | None = None,
    ) -> None:
        tools = catalogue or default_catalogue()
        server = build_server(db, settings, tools, record=record)
        single = SingleExchange(server)  # before the manager enters the server's lifespan
        self.manager = StreamableHTTPSessionManager(
            app=server,
            json_response=True,
            stateless=True,
            # Host and Origin are checked for the whole app by HostOriginGuard.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=MAX_UPLOAD_BODY,
        )
        self.front = McpFront(
            StreamableHTTPASGIApp(self.manager),
            db,
            settings,
            tools.names,
            single,
            tool_scopes={tool.name: tool.needs for tool in tools},
        )
        self.metadata = protected_resource_metadata(settings)

    def routes(self) -> list[Route]:
        async def metadata(_request: Request) -> JSONResponse:
            return JSONResponse(
                self.metadata,
                headers={
                    "Cache-Control": "public, max-age=3600",
                    "Access-Control-Allow-Origin": "*",
                },
            )

        return [
            Route("/mcp", self.front),
            Route(METADATA_PATH, metadata, methods=["GET"]),
            Route(ROOT_METADATA_PATH, metadata, methods=["GET"]),
        ]

    def running(self) -> AbstractAsyncContextManager[Any]:
        return self.manager.run()
