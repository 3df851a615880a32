"""Messages and the inbox in words: the camelCase answers for a person's inbox (the CLI and
the web app) and the participant threads (MCP, REST and the CLI), from the typed results of
`services/review/inbox` and `services/review/messages`."""

from __future__ import annotations

from typing import Any

from crewboard.contract.review.present import draft_view
from crewboard.contract.review.present_proposals import proposal_view
from crewboard.domain.review import (
    DraftRow,
    InboxItem,
    InboxMessage,
    InboxPage,
    ProposalRow,
    Thread,
)
from crewboard.services.paging import next_offset
from crewboard.services.views import iso


def message_view(message: InboxMessage) -> dict[str, Any]:
    return {
        "id": message.id,
        "projectId": message.project_id,
        "participantId": message.participant_id,
        "taskId": message.task_id,
        "body": message.body,
        "author": message.author,
        "createdAt": iso(message.created_at),
        "dismissedAt": iso(message.dismissed_at) if message.dismissed_at else None,
    }


def posted_view(message: InboxMessage) -> dict[str, Any]:
    """The answer of `post_message`: the message without its body, with the body's length."""
    view = {k: v for k, v in message_view(message).items() if k != "body"}
    return {"message": {**view, "length": len(message.body)}}


def thread_view(thread: Thread) -> dict[str, Any]:
    return {
        "projectId": thread.project_id,
        "participantId": thread.participant_id,
        "messages": [message_view(m) for m in thread.messages],
        "total": thread.total,
        "nextOffset": next_offset(thread.offset, len(thread.messages), thread.total),
    }


def inbox_item_view(entry: InboxItem) -> dict[str, Any]:
    """A row of the inbox: the item's own view, its `kind` and whether the person read it (a
    proposal card keeps its own kind as `proposalKind`)."""
    item = entry.item
    if isinstance(item, DraftRow):
        view = {**draft_view(item), "kind": entry.kind}
    elif isinstance(item, InboxMessage):
        view = {**message_view(item), "kind": entry.kind}
    elif isinstance(item, ProposalRow):
        view = {**proposal_view(item), "kind": entry.kind, "proposalKind": item.proposal.kind}
    else:
        view = {**item, "kind": entry.kind}
    view["read"] = entry.read
    return view


def inbox_view(page: InboxPage) -> dict[str, Any]:
    return {
        "projects": [{"id": p.id, "key": p.key, "name": p.name} for p in page.projects],
        "counts": page.counts,
        "total": page.total,
        "unread": page.unread,
        "items": [inbox_item_view(entry) for entry in page.items],
    }
