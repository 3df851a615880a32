"""Proposal cards in words: the camelCase answers for the typed cards of
`services/review/proposals`, on MCP, REST, the CLI and the web app's inbox."""

from __future__ import annotations

from typing import Any

from crewboard.domain.review import ProposalPage, ProposalRow
from crewboard.services.paging import next_offset
from crewboard.services.views import iso


def proposal_view(row: ProposalRow) -> dict[str, Any]:
    proposal = row.proposal
    return {
        "id": proposal.id,
        "projectId": proposal.project_id,
        "kind": proposal.kind,
        "taskId": row.task_id,
        "taskKey": row.task_key,
        "status": proposal.status,
        "payload": proposal.payload,
        "reason": proposal.reason,
        "author": proposal.author,
        "createdAt": iso(proposal.created_at),
        "decidedBy": proposal.decided_by,
        "decidedAt": iso(proposal.decided_at),
        "result": proposal.result,
    }


def proposed_view(row: ProposalRow) -> dict[str, Any]:
    """The answer of a proposal: the card (kept by the idempotency ledger)."""
    return {"proposal": proposal_view(row)}


def proposal_page_view(page: ProposalPage) -> dict[str, Any]:
    return {
        "proposals": [proposal_view(row) for row in page.rows],
        "total": page.total,
        "nextOffset": next_offset(page.offset, len(page.rows), page.total),
    }
