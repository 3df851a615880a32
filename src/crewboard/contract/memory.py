"""Memory tools: read the project's accepted knowledge (records and the project documents)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from crewboard.contract import memory_present
from crewboard.contract.args import Args, Offset
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply, page_note
from crewboard.domain.identity.access import Toolset
from crewboard.services.memory import records as memory
from crewboard.services.text_windows import WINDOW_LIMIT

DocumentName = Literal["overview", "context", "decisions", "notes", "legal"]
RecordId = Annotated[str, Field(min_length=1, max_length=200)]


class GetProjectMemory(Args):
    project_id: str | None = Field(
        default=None,
        max_length=200,
    )
    workspace_id: str | None = Field(
        default=None,
        max_length=200,
        description="null: private projects.",
    )
    document: DocumentName | None = None
    collection: str | None = Field(
        default=None,
        min_length=1,
        max_length=memory.MAX_COLLECTION,
    )
    include_content: bool = Field(
        default=True,
        description="false: titles and summaries.",
    )
    ids: list[RecordId] | None = Field(
        default=None,
        max_length=memory.MAX_IDS,
        description="Only these records (e.g. from memoryIndex).",
    )
    limit: int = Field(default=50, ge=1, le=memory.MAX_PAGE)
    offset: Offset = Field(default=0)
    content_offset: Offset = Field(
        default=0,
        description="Window start in one record's or the document's text.",
    )
    content_limit: int = Field(default=WINDOW_LIMIT, ge=1, le=WINDOW_LIMIT)


def get_project_memory(call: Call, args: GetProjectMemory) -> Reply:
    body = memory_present.get_project_memory(
        call.db, call.actor, project=args.project_id, workspace_id=args.workspace_ref(),
        document=args.document, collection=args.collection,
        ids=list(args.ids) if args.ids is not None else None,
        include_content=args.include_content, limit=args.limit, offset=args.offset,
        content_offset=args.content_offset if args.given("content_offset") else None,
        content_limit=args.content_limit if args.given("content_limit") else None,
    )  # fmt: skip
    if "text" in body:
        following = body["nextOffset"]
        more = f"Pass contentOffset {following} for more ({body['length']} characters)."
        return Reply(body, more if following is not None else None)
    shown = len(body["records"])
    notes = [page_note(shown=shown, offset=args.offset, total=body["total"])]
    if any(item.get("contentTruncated") for item in body["documents"] + body["records"]):
        notes.append(
            "A text marked contentTruncated was cut to fit this reply (contentLength is its "
            "full length): read the rest in windows with contentOffset, naming one record in "
            "ids or the document."
        )
    return Reply(body, " ".join(n for n in notes if n) or None)


MEMORY = Area(Toolset.MEMORY)

OPERATIONS = (
    MEMORY.read(
        "get_project_memory",
        "Read project memory",
        "Accepted project knowledge, to treat as settled: records and documents. contentOffset "
        "reads text cut short.",
        GetProjectMemory,
        get_project_memory,
        Rest("GET", "/api/v1/projects/{project}/memory"),
        Cli(("memory", "read")),
    ),
)
