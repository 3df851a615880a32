"""Memory tools: read the project's accepted knowledge (records and the project documents)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from crewboard.domain.identity.access import Toolset
from crewboard.mcp.args import Args, Offset
from crewboard.mcp.render import Reply, page_note
from crewboard.mcp.tooldef import Call, ToolDef
from crewboard.services.memory import records as memory

DocumentName = Literal["overview", "context", "decisions", "notes", "legal"]
RecordId = Annotated[str, Field(min_length=1, max_length=200)]


class GetProjectMemory(Args):
    project_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only this project (id or key); leave it out to read every project you can.",
    )
    workspace_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only projects of this workspace (null: your private projects).",
    )
    document: DocumentName | None = Field(
        default=None,
        description="One project document (legal holds asset rights): its text and the records "
        "filed in it.",
    )
    collection: str | None = Field(
        default=None,
        min_length=1,
        max_length=memory.MAX_COLLECTION,
        description="Only records in this collection, named as list_projects shows it (any case).",
    )
    include_content: bool = Field(
        default=True,
        description="false: titles, summaries and where each record is filed, with text lengths "
        "instead of the text.",
    )
    ids: list[RecordId] | None = Field(
        default=None,
        max_length=memory.MAX_IDS,
        description="Only these records (up to 50), e.g. from a context pack's memoryIndex; "
        "documents are left out. An id you cannot read is simply missing.",
    )
    limit: int = Field(
        default=50, ge=1, le=memory.MAX_PAGE, description="Records per page (1-200, default 50)."
    )
    offset: Offset = Field(default=0, description="Records to skip; use nextOffset.")


def get_project_memory(call: Call, args: GetProjectMemory) -> Reply:
    body = memory.get_project_memory(
        call.db,
        call.actor,
        project=args.project_id,
        workspace_id=args.workspace_ref(),
        document=args.document,
        collection=args.collection,
        ids=list(args.ids) if args.ids is not None else None,
        include_content=args.include_content,
        limit=args.limit,
        offset=args.offset,
    )
    shown = len(body["records"])
    notes = [page_note(shown=shown, offset=args.offset, total=body["total"])]
    if any(item.get("contentTruncated") for item in body["documents"] + body["records"]):
        notes.append(
            "A text marked contentTruncated was cut to fit this reply: contentLength gives its "
            "full length. Ask for fewer entries (a document alone, or ids) to read more of it."
        )
    return Reply(body, " ".join(n for n in notes if n) or None)


TOOLS = (
    ToolDef(
        name="get_project_memory",
        title="Read project memory",
        description=(
            "Read the project's accepted knowledge: records a person approved or marked canon "
            "(drafts still waiting for review are never here) and the accepted text of the "
            "project documents overview, context, decisions, notes and legal (asset rights). "
            "Treat it as settled fact. Each record names the collection and document it is "
            "filed in. Narrow with document (its text plus its records), collection, or ids "
            "(records only, at most 50); includeContent false returns titles and summaries. "
            "Records come most recently changed first, paged with limit and offset; documents "
            "come with the first page. When a page is cut, a second text part gives the total "
            "and the next offset."
        ),
        args=GetProjectMemory,
        toolset=Toolset.MEMORY,
        run=get_project_memory,
    ),
)
