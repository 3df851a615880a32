"""Search from anywhere: one project's tasks, hand-ins, memory records, task comments, spec
files, artifacts and handoffs.

Each kind is matched through its text index, every word whole (any case; no prefixes or
substrings), so all four behave alike: tasks through the index behind the board's `q` (title,
brief, description), memory records through theirs (title, summary, content), hand-ins
(title, summary, content) and comments and agent updates (content) through theirs (migration
0012), spec files, artifacts and handoffs through the text kept for them (search_texts,
migration 0026). Each kind costs two statements (a page and a count), whatever the project
holds. Excerpts are the text as read, markdown's marks taken out. Access is the project's: a person who cannot open it gets "not found", and every query
names the project.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from crewboard.domain.board.tasks import search_words
from crewboard.domain.identity.records import Actor
from crewboard.domain.projects import Project
from crewboard.errors import ValidationFailed
from crewboard.services.board.queries import MAX_Q
from crewboard.services.identity.access import access_project
from crewboard.services.screens.excerpts import Part, excerpt, marked, plain_text, word_pattern
from crewboard.storage.board.search import search_comments
from crewboard.storage.board.tasks import TaskFilter
from crewboard.storage.database import Database
from crewboard.storage.memory.search import search_records
from crewboard.storage.review.search import search_drafts
from crewboard.storage.search_texts import search_texts_of
from crewboard.storage.uow import UnitOfWork

KINDS = ("tasks", "handins", "memory", "comments", "specs", "artifacts", "handoffs")
_TEXT_KINDS = {"specs": "spec_file", "artifacts": "artifact", "handoffs": "handoff"}
PER_KIND = 10  # results of each kind on the overview ("more" opens the rest)
PAGE = 25  # results of one kind a page
MAX_OFFSET = 10_000


@dataclass(frozen=True)
class Found:
    """One result: what it links by (`ref`: a task key, a hand-in or record id), its title and
    an excerpt with the searched words marked."""

    kind: str
    ref: str
    title: list[Part]
    excerpt: list[Part]
    at: datetime | None = None
    status: str | None = None
    task_key: str | None = None  # the task a hand-in or comment belongs to
    note_kind: str | None = None  # a comment's: comment | agent_update
    link: str | None = None  # an artifact's slug, a handoff's day


@dataclass(frozen=True)
class Group:
    kind: str
    items: list[Found]
    total: int
    offset: int = 0

    @property
    def more(self) -> bool:
        return self.offset + len(self.items) < self.total


@dataclass(frozen=True)
class SearchResults:
    q: str
    words: list[str]
    kind: str | None = None  # one kind, paged; None: the first PER_KIND of each
    groups: list[Group] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(group.total for group in self.groups)


def search_project(
    db: Database,
    actor: Actor,
    *,
    project: str,
    q: str,
    kind: str | None = None,
    offset: int = 0,
) -> SearchResults:
    """What in the project matches every word of `q`: the first PER_KIND of each kind, or one
    page of one `kind` from `offset`. A query without a word finds nothing (no error).

    Raises:
        ValidationFailed: `q` over MAX_Q characters, an unknown `kind`, a bad `offset`.
        NotFound: the project, or the actor cannot open it.
    """
    words = _check(q, kind, offset)

    def work(uow: UnitOfWork) -> SearchResults:
        found = access_project(uow, actor, project).project
        if not words:
            return SearchResults(q, words, kind)
        size, start = (PAGE, offset) if kind else (PER_KIND, 0)
        groups = [
            _SEARCHES[name](uow, found, words, size, start) for name in ([kind] if kind else KINDS)
        ]
        return SearchResults(q, words, kind, groups)

    return db.read(work)


def _check(q: str, kind: str | None, offset: int) -> list[str]:
    if len(q) > MAX_Q:
        raise ValidationFailed.field(
            "q", f"at most {MAX_Q} characters; this search has {len(q)}. Shorten it."
        )
    if kind is not None and kind not in KINDS:
        raise ValidationFailed.field("kind", f"{kind!r} is not a kind of result.", list(KINDS))
    if not 0 <= offset <= MAX_OFFSET:
        raise ValidationFailed.field("offset", f"must be from 0 to {MAX_OFFSET}; got {offset}.")
    # A word of underscores alone holds nothing the text indexes keep (PostgreSQL's would then
    # match every task): it is no word to search for.
    return [word for word in search_words(q) if word.strip("_")]


def _tasks(uow: UnitOfWork, project: Project, words: list[str], size: int, start: int) -> Group:
    """Through the board's text index, exactly as `q` filters the board; newest first."""
    rows, total = uow.tasks.search(
        TaskFilter(project_ids=[project.id], words=words), descending=True, limit=size, offset=start
    )
    pattern = word_pattern(words, whole_words=True)
    items = [
        Found(
            "tasks",
            f"{project.key}-{task.number}",
            marked(task.title, pattern),
            excerpt([plain_text(task.brief), plain_text(task.description)], pattern),
            at=task.updated_at,
            status=str(task.status),
        )
        for task in rows
    ]
    return Group("tasks", items, total, start)


def _handins(uow: UnitOfWork, project: Project, words: list[str], size: int, start: int) -> Group:
    hits = search_drafts(uow.conn, project.id, words, limit=size, offset=start)
    numbers = uow.tasks.numbers_of(row.task_id for row in hits.rows if row.task_id)
    pattern = word_pattern(words, whole_words=True)
    items = [
        Found(
            "handins",
            row.id,
            marked(row.title, pattern),
            excerpt([plain_text(row.summary), plain_text(row.content)], pattern),
            at=row.created_at,
            status=row.status,
            task_key=_key(project, numbers.get(row.task_id) if row.task_id else None),
        )
        for row in hits.rows
    ]
    return Group("handins", items, hits.total, start)


def _memory(uow: UnitOfWork, project: Project, words: list[str], size: int, start: int) -> Group:
    rows, total = search_records(uow.conn, project.id, words, limit=size, offset=start)
    pattern = word_pattern(words, whole_words=True)
    items = [
        Found(
            "memory",
            row.id,
            marked(row.title, pattern),
            excerpt([plain_text(row.summary), plain_text(row.content)], pattern),
            at=row.updated_at,
            status=row.status,
        )
        for row in rows
    ]
    return Group("memory", items, total, start)


def _comments(uow: UnitOfWork, project: Project, words: list[str], size: int, start: int) -> Group:
    hits = search_comments(uow.conn, project.id, words, limit=size, offset=start)
    pattern = word_pattern(words, whole_words=True)
    items = [
        Found(
            "comments",
            row.id,
            [(row.task_title, False)],
            excerpt([plain_text(row.content)], pattern),
            at=row.created_at,
            task_key=f"{project.key}-{row.task_number}",
            note_kind=row.kind,
        )
        for row in hits.rows
    ]
    return Group("comments", items, hits.total, start)


def _texts(kind: str) -> Callable[[UnitOfWork, Project, list[str], int, int], Group]:
    """Spec files, artifacts or handoffs, through the text kept for search."""

    def found(uow: UnitOfWork, project: Project, words: list[str], size: int, start: int) -> Group:
        rows, total = search_texts_of(
            uow.conn, _TEXT_KINDS[kind], project.id, words, limit=size, offset=start
        )
        pattern = word_pattern(words, whole_words=True)
        items = [
            Found(kind, row.id, marked(row.title, pattern),
                  excerpt([plain_text(row.content)], pattern), at=row.created_at, link=row.link)
            for row in rows
        ]  # fmt: skip
        return Group(kind, items, total, start)

    return found


def _key(project: Project, number: int | None) -> str | None:
    return f"{project.key}-{number}" if number is not None else None


_SEARCHES = {
    "tasks": _tasks, "handins": _handins, "memory": _memory, "comments": _comments,
    **{kind: _texts(kind) for kind in _TEXT_KINDS},
}  # fmt: skip
