"""Stream token tools: make a short-lived token an outside client follows a project's live
events with, list them, revoke one. A stream token only reads, so a token that may read the
project may make one; a project's admins see and may stop every one that follows it."""

from __future__ import annotations

from pydantic import Field

from crewboard.contract.args import Args, Paging
from crewboard.contract.operation import Area, Call, Cli, Rest
from crewboard.contract.reply import Reply, paged_reply
from crewboard.domain.identity.access import Role, Toolset
from crewboard.services.identity import stream_tokens


class CreateStreamToken(Args):
    project_ids: list[str] = Field(
        min_length=1,
        max_length=stream_tokens.MAX_PROJECTS,
        description="Projects (ids or keys) the stream may follow: ones you can read.",
    )
    lifetime_seconds: int = Field(
        default=stream_tokens.DEFAULT_SECONDS,
        ge=60,
        le=stream_tokens.MAX_SECONDS,
        description="How long it works, up to 24 hours.",
    )
    name: str | None = Field(default=None, max_length=120)


class ListStreamTokens(Paging):
    project_id: str | None = Field(
        default=None,
        max_length=200,
        description="Only those that follow this project (id or key).",
    )
    include_expired: bool = Field(
        default=True, description="false: leave out those past their expiry."
    )
    include_revoked: bool = Field(default=True, description="false: leave out revoked ones.")


class RevokeStreamToken(Args):
    stream_token_id: str = Field(min_length=1, max_length=200)


def create_stream_token(call: Call, args: CreateStreamToken) -> Reply:
    made = stream_tokens.create_stream_token(
        call.db, call.actor, projects=args.project_ids,
        lifetime_seconds=args.lifetime_seconds, name=args.name,
    )  # fmt: skip
    project = made["streamToken"]["projects"][0]["id"]
    return Reply(
        made,
        f"The secret is shown this once. Follow the project with GET /api/v1/projects/"
        f"{project}/events and the header Authorization: Bearer <secret> (Server-Sent Events; "
        "Last-Event-ID resumes).",
    )


def list_stream_tokens(call: Call, args: ListStreamTokens) -> Reply:
    found = stream_tokens.list_stream_tokens(
        call.db, call.actor, project=args.project_id, include_expired=args.include_expired,
        include_revoked=args.include_revoked, limit=args.limit, offset=args.offset,
    )  # fmt: skip
    return paged_reply(found, "streamTokens", args.offset)


def revoke_stream_token(call: Call, args: RevokeStreamToken) -> Reply:
    return Reply(
        stream_tokens.revoke_stream_token(call.db, call.actor, token_id=args.stream_token_id)
    )


TOKENS = Area(Toolset.ADMIN, write_scopes=(), write_role=Role.READ)

OPERATIONS = (
    TOKENS.write(
        "create_stream_token",
        "Create a stream token",
        "A short-lived, read-only token for following projects' live events (Server-Sent "
        "Events) from another program. The secret is returned once. You hold at most 20 "
        "that still work; one made through a token or connected app is revoked with it.",
        CreateStreamToken,
        create_stream_token,
        Rest.created("/api/v1/stream-tokens"),
        Cli(("stream-token", "create")),
        idempotent=False,
    ),
    TOKENS.read(
        "list_stream_tokens",
        "List stream tokens",
        "Your stream tokens and those following projects you administer, newest first, 50 a "
        "page (limit up to 200): who made each and through which token or app, its projects "
        "(those you cannot read only counted), expiry, whether it still works. Never a secret.",
        ListStreamTokens,
        list_stream_tokens,
        Rest("GET", "/api/v1/stream-tokens"),
        Cli(("stream-token", "list")),
        needs_project=False,
    ),
    TOKENS.write(
        "revoke_stream_token",
        "Revoke a stream token",
        "Stop a stream token at once, yours or one following a project you administer; its "
        "open streams end.",
        RevokeStreamToken,
        revoke_stream_token,
        Rest("DELETE", "/api/v1/stream-tokens/{streamToken}"),
        Cli(("stream-token", "revoke")),
    ),
)
