"""REST routes for project memory: a project's accepted records and documents, one record.

The query is checked by the same argument model as the get_project_memory tool, so a bad
value is refused with the same code and field. `ids` may repeat or be a comma list.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from crewboard.api.common import Endpoint, parse_args, query_list, run_service
from crewboard.api.operations import endpoint_for
from crewboard.contract import memory_present as memory
from crewboard.contract.memory import GetProjectMemory


def _memory_query(request: Request) -> dict[str, Any]:
    params = request.query_params
    data: dict[str, Any] = {k: v for k, v in params.items() if k != "ids"}
    if "ids" in params:
        data["ids"] = query_list(request, "ids")
    data["projectId"] = request.path_params["project"]
    return data


async def project_memory(request: Request) -> dict[str, Any]:
    query = parse_args(GetProjectMemory, _memory_query(request), strict=False)
    return await run_service(
        request,
        lambda db, actor: memory.get_project_memory(
            db,
            actor,
            project=query.project_id,
            document=query.document,
            collection=query.collection,
            ids=list(query.ids) if query.ids is not None else None,
            include_content=query.include_content,
            limit=query.limit,
            offset=query.offset,
            content_offset=query.content_offset if query.given("content_offset") else None,
            content_limit=query.content_limit if query.given("content_limit") else None,
        ),
    )


async def memory_record(request: Request) -> dict[str, Any]:
    record_id = request.path_params["record_id"]
    return await run_service(request, lambda db, actor: memory.get_record(db, actor, record_id))


ENDPOINTS: tuple[Endpoint, ...] = (
    endpoint_for(
        "get_project_memory",
        project_memory,
        "A project's accepted records and documents (document, collection, ids, "
        "includeContent, limit, offset; contentOffset, contentLimit: one text in windows)",
        query=GetProjectMemory,
    ),
    Endpoint(
        "/api/v1/memory/{record_id}",
        "GET",
        memory_record,
        "One accepted memory record in full",
    ),
)
