"""SQL for what is said and linked on a task: comments, agent updates, outputs, questions,
code repositories, task × branch links and repository status reports."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    and_,
    bindparam,
    func,
    insert,
    or_,
    select,
)

from crewboard.domain.board.notes import NoteKind, TaskComment, TaskOutput, TaskQuestion
from crewboard.domain.board.repos import Repo, RepoLink, RepoReport
from crewboard.storage.board import tables as t

PREVIEW_CHARS = 500


def _output_columns(*, preview: bool) -> list[Any]:
    c = t.task_outputs.c
    content = func.substr(c.content, 1, PREVIEW_CHARS) if preview else c.content
    return [
        c.id,
        c.project_id,
        c.task_id,
        c.name,
        content.label("content"),
        func.length(c.content).label("length"),
        c.author,
        c.created_at,
    ]


# Built once, values passed as parameters: building one costs more than running it on SQLite.
_COMMENTS = t.task_comments.c
_OUTPUTS = t.task_outputs.c
_QUESTIONS = t.task_questions.c
_LIMIT = bindparam("limit", type_=Integer)
_OFFSET = bindparam("offset", type_=Integer)

_LATEST_NOTE_TIME = select(func.max(_COMMENTS.created_at)).where(
    _COMMENTS.task_id == bindparam("task_id")
)
_INSERT_COMMENT = insert(t.task_comments)
_COMMENTS_OF_KINDS = and_(
    _COMMENTS.task_id == bindparam("task_id"),
    _COMMENTS.kind.in_(bindparam("kinds", expanding=True)),
)
_COUNT_COMMENTS = select(func.count()).select_from(t.task_comments).where(_COMMENTS_OF_KINDS)
_COMMENTS_PAGE = (
    select(t.task_comments)
    .where(_COMMENTS_OF_KINDS)
    .order_by(_COMMENTS.created_at.desc(), _COMMENTS.id.desc())
    .limit(_LIMIT)
    .offset(_OFFSET)
)

_OUTPUT_HISTORY = select(func.count(), func.max(_OUTPUTS.created_at)).where(
    _OUTPUTS.task_id == bindparam("task_id"), _OUTPUTS.name == bindparam("name")
)
_INSERT_OUTPUT = insert(t.task_outputs)
_PER_NAME = (
    select(
        _OUTPUTS.name.label("name"),
        func.max(_OUTPUTS.created_at).label("newest"),
        func.count().label("versions"),
    )
    .where(_OUTPUTS.task_id == bindparam("task_id"))
    .group_by(_OUTPUTS.name)
    .subquery()
)
_COUNT_OUTPUT_NAMES = select(func.count()).select_from(_PER_NAME)
# Keyed by `newest_first`.
_LATEST_OUTPUTS = {
    newest_first: select(
        *_output_columns(preview=True),
        _PER_NAME.c.versions,
        _PER_NAME.c.versions.label("version"),
    )
    .join(
        _PER_NAME,
        and_(_OUTPUTS.name == _PER_NAME.c.name, _OUTPUTS.created_at == _PER_NAME.c.newest),
    )
    .where(_OUTPUTS.task_id == bindparam("task_id"))
    .order_by(
        *((_OUTPUTS.created_at.desc(), _OUTPUTS.id.desc()) if newest_first else (_OUTPUTS.name,))
    )
    .limit(_LIMIT)
    .offset(_OFFSET)
    for newest_first in (False, True)
}
_OUTPUT_VERSION = (
    select(*_output_columns(preview=False))
    .where(_OUTPUTS.task_id == bindparam("task_id"), _OUTPUTS.name == bindparam("name"))
    .order_by(_OUTPUTS.created_at, _OUTPUTS.id)
    .offset(_OFFSET)
    .limit(1)
)
_OUTPUT_BY_ID = select(*_output_columns(preview=False)).where(
    _OUTPUTS.task_id == bindparam("task_id"), _OUTPUTS.id == bindparam("output_id")
)
# The versions of a name saved up to a given one (its version number), in the order of
# _OUTPUT_VERSION: by time saved, then id.
_VERSIONS_UP_TO = (
    select(func.count())
    .select_from(t.task_outputs)
    .where(
        _OUTPUTS.task_id == bindparam("task_id"),
        _OUTPUTS.name == bindparam("name"),
        or_(
            _OUTPUTS.created_at < bindparam("at"),
            and_(_OUTPUTS.created_at == bindparam("at"), _OUTPUTS.id <= bindparam("output_id")),
        ),
    )
)

_INSERT_QUESTION = insert(t.task_questions)
_QUESTION_BY_ID = select(t.task_questions).where(_QUESTIONS.id == bindparam("question_id"))
_ANSWER_QUESTION = t.task_questions.update().where(
    _QUESTIONS.id == bindparam("question_id_"), _QUESTIONS.answered_at.is_(None)
)
_COUNT_TASK_QUESTIONS = (
    select(func.count())
    .select_from(t.task_questions)
    .where(_QUESTIONS.task_id == bindparam("task_id"))
)
_TASK_QUESTIONS = (
    select(t.task_questions)
    .where(_QUESTIONS.task_id == bindparam("task_id"))
    .order_by(_QUESTIONS.asked_at.desc(), _QUESTIONS.id.desc())
    .limit(_LIMIT)
)


def _count_comments_of_kind(kind: str) -> Any:
    return (
        select(func.count())
        .where(_COMMENTS.task_id == bindparam("task_id"), _COMMENTS.kind == kind)
        .scalar_subquery()
    )


_NOTE_COUNTS = select(
    _count_comments_of_kind("comment"),
    _count_comments_of_kind("agent_update"),
    select(func.count(func.distinct(_OUTPUTS.name)))
    .where(_OUTPUTS.task_id == bindparam("task_id"))
    .scalar_subquery(),
    select(func.count()).where(_QUESTIONS.task_id == bindparam("task_id")).scalar_subquery(),
    select(func.count())
    .where(_QUESTIONS.task_id == bindparam("task_id"), _QUESTIONS.answered_at.is_(None))
    .scalar_subquery(),
)
_QUESTION_COUNTS = select(func.count(), func.count(_QUESTIONS.answered_at)).where(
    _QUESTIONS.task_id == bindparam("task_id")
)
_OPEN_QUESTIONS_OF_PROJECT = and_(
    _QUESTIONS.project_id == bindparam("project_id"), _QUESTIONS.answered_at.is_(None)
)
_COUNT_OPEN_QUESTIONS = (
    select(func.count()).select_from(t.task_questions).where(_OPEN_QUESTIONS_OF_PROJECT)
)
_OPEN_QUESTIONS = (
    select(t.task_questions)
    .where(_OPEN_QUESTIONS_OF_PROJECT)
    .order_by(_QUESTIONS.asked_at, _QUESTIONS.id)
    .limit(_LIMIT)
    .offset(_OFFSET)
)

_REPOS = t.repos.c
_LINKS = t.task_repo_links.c
_REPORTS = t.task_repo_reports.c
_INSERT_REPO = insert(t.repos)
_REPO_BY_ID = select(t.repos).where(_REPOS.id == bindparam("repo_id"))
_REPO_BY_NAME = select(t.repos).where(
    _REPOS.project_id == bindparam("project_id"), _REPOS.name == bindparam("name")
)
_REPOS_OF_PROJECT = (
    select(t.repos).where(_REPOS.project_id == bindparam("project_id")).order_by(_REPOS.name)
)
_LINK = select(t.task_repo_links).where(
    _LINKS.task_id == bindparam("task_id"),
    _LINKS.repo_id == bindparam("repo_id"),
    _LINKS.agent == bindparam("agent"),
    _LINKS.branch == bindparam("branch"),
)
_INSERT_LINK = insert(t.task_repo_links)
_UPDATE_LINK = t.task_repo_links.update().where(_LINKS.id == bindparam("link_id_"))
_TASK_LINKS = (
    select(t.task_repo_links)
    .where(_LINKS.task_id == bindparam("task_id"))
    .order_by(_LINKS.updated_at.desc(), _LINKS.id.desc())
)
_INSERT_REPORT = insert(t.task_repo_reports)
_COUNT_TASK_REPORTS = (
    select(func.count())
    .select_from(t.task_repo_reports)
    .where(_REPORTS.task_id == bindparam("task_id"))
)
_TASK_REPORTS = (
    select(t.task_repo_reports)
    .where(_REPORTS.task_id == bindparam("task_id"))
    .order_by(_REPORTS.created_at.desc(), _REPORTS.id.desc())
    .limit(_LIMIT)
)


def _comment(row: Any) -> TaskComment:
    return TaskComment(**row._asdict() | {"kind": NoteKind(row.kind)})


class NoteRepository:
    """Comments and agent updates, outputs (every version kept), questions."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- comments and agent updates -------------------------------------------------------

    def latest_note_time(self, task_id: str) -> datetime | None:
        """When the task's newest comment or agent update was written (None: there is none)."""
        value: datetime | None = self.conn.execute(
            _LATEST_NOTE_TIME, {"task_id": task_id}
        ).scalar_one()
        return value

    def add_comment(self, comment: TaskComment) -> None:
        self.conn.execute(_INSERT_COMMENT, asdict(comment) | {"kind": comment.kind.value})

    def comments(
        self, task_id: str, *, kinds: tuple[str, ...], limit: int, offset: int
    ) -> tuple[list[TaskComment], int]:
        """The task's comments of these kinds, newest first."""
        where = {"task_id": task_id, "kinds": list(kinds)}
        total = self.conn.execute(_COUNT_COMMENTS, where).scalar_one()
        rows = self.conn.execute(_COMMENTS_PAGE, {**where, "limit": limit, "offset": offset})
        return [_comment(row) for row in rows], int(total)

    def comment_texts(self, comment_ids: Collection[str]) -> dict[str, str]:
        """The whole text of these comments, by id (those that exist)."""
        if not comment_ids:
            return {}
        query = select(_COMMENTS.id, _COMMENTS.content).where(_COMMENTS.id.in_(list(comment_ids)))
        return {row.id: row.content for row in self.conn.execute(query)}

    # --- outputs --------------------------------------------------------------------------

    def output_history(self, task_id: str, name: str) -> tuple[int, datetime | None]:
        """How many versions an output name has on the task, and when the newest was saved."""
        row = self.conn.execute(_OUTPUT_HISTORY, {"task_id": task_id, "name": name}).one()
        return int(row[0]), row[1]

    def add_output(
        self,
        *,
        output_id: str,
        project_id: str,
        task_id: str,
        name: str,
        content: str,
        author: dict[str, Any],
        at: datetime,
    ) -> None:
        self.conn.execute(
            _INSERT_OUTPUT,
            {
                "id": output_id,
                "project_id": project_id,
                "task_id": task_id,
                "name": name,
                "content": content,
                "author": author,
                "created_at": at,
            },
        )

    def latest_outputs(
        self, task_id: str, *, limit: int, offset: int, newest_first: bool = False
    ) -> tuple[list[TaskOutput], int]:
        """The newest version of each output name (content cut to a preview), by name or, with
        `newest_first`, the most recently saved first."""
        total = self.conn.execute(_COUNT_OUTPUT_NAMES, {"task_id": task_id}).scalar_one()
        rows = self.conn.execute(
            _LATEST_OUTPUTS[newest_first], {"task_id": task_id, "limit": limit, "offset": offset}
        )
        return [TaskOutput(**row._asdict()) for row in rows], int(total)

    def output(self, task_id: str, name: str, version: int | None) -> TaskOutput | None:
        """One version of an output in full (None: the newest)."""
        count, _ = self.output_history(task_id, name)
        wanted = count if version is None else version
        if not 1 <= wanted <= count:
            return None
        row = self.conn.execute(
            _OUTPUT_VERSION, {"task_id": task_id, "name": name, "offset": wanted - 1}
        ).one()
        return TaskOutput(**row._asdict(), version=wanted, versions=count)

    def output_by_id(self, task_id: str, output_id: str) -> TaskOutput | None:
        """One version of an output of the task in full, by its id."""
        row = self.conn.execute(
            _OUTPUT_BY_ID, {"task_id": task_id, "output_id": output_id}
        ).one_or_none()
        if row is None:
            return None
        count, _ = self.output_history(task_id, row.name)
        place = {"task_id": task_id, "name": row.name, "at": row.created_at, "output_id": row.id}
        version = self.conn.execute(_VERSIONS_UP_TO, place).scalar_one()
        return TaskOutput(**row._asdict(), version=int(version), versions=count)

    # --- questions ------------------------------------------------------------------------

    def add_question(self, question: TaskQuestion) -> None:
        self.conn.execute(_INSERT_QUESTION, asdict(question))

    def question(self, question_id: str) -> TaskQuestion | None:
        row = self.conn.execute(_QUESTION_BY_ID, {"question_id": question_id}).first()
        return TaskQuestion(**row._asdict()) if row else None

    def answer_question(
        self, question_id: str, *, answer: str, answered_by: dict[str, Any], at: datetime
    ) -> bool:
        """Record the answer unless someone answered first (one compare-and-set statement)."""
        result = self.conn.execute(
            _ANSWER_QUESTION,
            {
                "question_id_": question_id,
                "answer": answer,
                "answered_by": answered_by,
                "answered_at": at,
            },
        )
        return result.rowcount == 1

    def task_questions(self, task_id: str, *, limit: int) -> tuple[list[TaskQuestion], int]:
        """The task's questions, newest first."""
        total = self.conn.execute(_COUNT_TASK_QUESTIONS, {"task_id": task_id}).scalar_one()
        rows = self.conn.execute(_TASK_QUESTIONS, {"task_id": task_id, "limit": limit})
        return [TaskQuestion(**row._asdict()) for row in rows], int(total)

    # --- the whole thread, newest first (list_task_notes, get_task) -------------------------

    def thread(
        self,
        task_id: str,
        *,
        kinds: Collection[str],
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[ThreadNote]:
        """The task's notes of these kinds (comment, agent_update, output: every save,
        question), newest first by (time, id), only those older than `before` when given.

        Each table is read by its own keyset query of at most `limit` rows, so a page costs
        the same on a long thread as on a short one.
        """
        found: list[ThreadNote] = []
        note_kinds = [k for k in kinds if k in ("comment", "agent_update")]
        if note_kinds:
            found += self._thread_comments(task_id, note_kinds, before, limit)
        if "output" in kinds:
            found += self._thread_outputs(task_id, before, limit)
        if "question" in kinds:
            found += self._thread_questions(task_id, before, limit)
        found.sort(key=thread_position, reverse=True)
        return found[:limit]

    def _thread_comments(
        self, task_id: str, kinds: list[str], before: tuple[datetime, str] | None, limit: int
    ) -> list[ThreadNote]:
        c = t.task_comments.c
        rows = self.conn.execute(
            select(t.task_comments)
            .where(c.task_id == task_id, c.kind.in_(kinds), *_older(c.created_at, c.id, before))
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
        )
        return [_comment(row) for row in rows]

    def _thread_outputs(
        self, task_id: str, before: tuple[datetime, str] | None, limit: int
    ) -> list[ThreadNote]:
        c = t.task_outputs.c
        same = t.task_outputs.alias("same_name")
        s = same.c
        # Versions of one name are saved one after another, strictly later each time.
        version = (
            select(func.count())
            .where(s.task_id == c.task_id, s.name == c.name, s.created_at <= c.created_at)
            .scalar_subquery()
        )
        versions = (
            select(func.count()).where(s.task_id == c.task_id, s.name == c.name).scalar_subquery()
        )
        rows = self.conn.execute(
            select(
                *_output_columns(preview=True),
                version.label("version"),
                versions.label("versions"),
            )
            .where(c.task_id == task_id, *_older(c.created_at, c.id, before))
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
        )
        return [TaskOutput(**row._asdict()) for row in rows]

    def _thread_questions(
        self, task_id: str, before: tuple[datetime, str] | None, limit: int
    ) -> list[ThreadNote]:
        c = t.task_questions.c
        rows = self.conn.execute(
            select(t.task_questions)
            .where(c.task_id == task_id, *_older(c.asked_at, c.id, before))
            .order_by(c.asked_at.desc(), c.id.desc())
            .limit(limit)
        )
        return [TaskQuestion(**row._asdict()) for row in rows]

    def note_counts(self, task_id: str) -> dict[str, int]:
        """How many comments, agent updates, output names, questions and open questions (one
        round trip)."""
        row = self.conn.execute(_NOTE_COUNTS, {"task_id": task_id}).one()
        names = ("comment", "agent_update", "output", "question", "openQuestion")
        return {name: int(value) for name, value in zip(names, row, strict=True)}

    def question_counts(self, task_id: str) -> dict[str, int]:
        """How many questions the task has, and how many of them wait for an answer."""
        total, answered = self.conn.execute(_QUESTION_COUNTS, {"task_id": task_id}).one()
        return {"question": int(total), "openQuestion": int(total) - int(answered)}

    def open_questions(
        self, project_id: str, *, limit: int, offset: int
    ) -> tuple[list[TaskQuestion], int]:
        """A project's unanswered questions, oldest first (the longest waiting on top)."""
        total = self.conn.execute(_COUNT_OPEN_QUESTIONS, {"project_id": project_id}).scalar_one()
        rows = self.conn.execute(
            _OPEN_QUESTIONS, {"project_id": project_id, "limit": limit, "offset": offset}
        )
        return [TaskQuestion(**row._asdict()) for row in rows], int(total)


ThreadNote = TaskComment | TaskOutput | TaskQuestion


def thread_position(note: ThreadNote) -> tuple[datetime, str]:
    """Where a note stands in its task's thread: when it was written, then its id."""
    return (note.asked_at if isinstance(note, TaskQuestion) else note.created_at, note.id)


def _older(
    at: ColumnElement[datetime], id_: ColumnElement[str], before: tuple[datetime, str] | None
) -> list[ColumnElement[bool]]:
    """The keyset condition: strictly before `before` in (time, id) order."""
    if before is None:
        return []
    moment, after_id = before
    return [or_(at < moment, and_(at == moment, id_ < after_id))]


class RepoLinkRepository:
    """A project's code repositories, task × branch links to them, and status reports."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- repositories ---------------------------------------------------------------------

    def add_repo(self, repo: Repo) -> None:
        self.conn.execute(_INSERT_REPO, asdict(repo))

    def repo(self, repo_id: str) -> Repo | None:
        row = self.conn.execute(_REPO_BY_ID, {"repo_id": repo_id}).first()
        return Repo(**row._asdict()) if row else None

    def repo_named(self, project_id: str, name: str) -> Repo | None:
        row = self.conn.execute(_REPO_BY_NAME, {"project_id": project_id, "name": name}).first()
        return Repo(**row._asdict()) if row else None

    def repos(self, project_id: str) -> list[Repo]:
        rows = self.conn.execute(_REPOS_OF_PROJECT, {"project_id": project_id})
        return [Repo(**row._asdict()) for row in rows]

    # --- links ----------------------------------------------------------------------------

    def link(self, task_id: str, repo_id: str, agent: str, branch: str) -> RepoLink | None:
        row = self.conn.execute(
            _LINK, {"task_id": task_id, "repo_id": repo_id, "agent": agent, "branch": branch}
        ).first()
        return RepoLink(**row._asdict()) if row else None

    def add_link(self, link: RepoLink) -> None:
        self.conn.execute(_INSERT_LINK, asdict(link))

    def update_link(self, link: RepoLink) -> None:
        self.conn.execute(
            _UPDATE_LINK,
            {
                "link_id_": link.id,
                "target_branch": link.target_branch,
                "title": link.title,
                "summary": link.summary,
                "pr_url": link.pr_url,
                "updated_at": link.updated_at,
            },
        )

    def linked_tasks(
        self, repo_id: str, *, branch: str | None = None, pr_url: str | None = None
    ) -> list[str]:
        """Ids of tasks with a link in the repository on `branch` or to `pr_url`."""
        wanted = [c for c in (
            _LINKS.branch == branch if branch else None,
            _LINKS.pr_url == pr_url if pr_url else None,
        ) if c is not None]  # fmt: skip
        if not wanted:
            return []
        query = select(_LINKS.task_id).where(_LINKS.repo_id == repo_id, or_(*wanted)).distinct()
        return list(self.conn.execute(query).scalars())

    def task_links(self, task_id: str) -> list[RepoLink]:
        """The task's links, the most recently changed first."""
        rows = self.conn.execute(_TASK_LINKS, {"task_id": task_id})
        return [RepoLink(**row._asdict()) for row in rows]

    # --- status reports -------------------------------------------------------------------

    def add_report(self, report: RepoReport) -> None:
        self.conn.execute(_INSERT_REPORT, asdict(report))

    def task_reports(self, task_id: str, *, limit: int) -> tuple[list[RepoReport], int]:
        """The task's newest status reports first."""
        total = self.conn.execute(_COUNT_TASK_REPORTS, {"task_id": task_id}).scalar_one()
        rows = self.conn.execute(_TASK_REPORTS, {"task_id": task_id, "limit": limit})
        return [RepoReport(**row._asdict()) for row in rows], int(total)
