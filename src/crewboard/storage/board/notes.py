"""SQL for what is said and linked on a task: comments, agent updates, outputs, questions,
code repositories, task × branch links and repository status reports."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, func, or_, select

from crewboard.storage.board import tables as t

PREVIEW_CHARS = 500


@dataclass(frozen=True)
class TaskComment:
    id: str
    project_id: str
    task_id: str
    kind: str  # comment | agent_update
    content: str
    author: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class TaskOutput:
    """One saved version of a named deliverable; `content` is whole or a preview."""

    id: str
    project_id: str
    task_id: str
    name: str
    content: str
    length: int  # characters of the whole content
    author: dict[str, Any]
    created_at: datetime
    version: int
    versions: int


@dataclass(frozen=True)
class TaskQuestion:
    id: str
    project_id: str
    task_id: str
    question: str
    asked_by: dict[str, Any]
    asked_at: datetime
    answer: str | None = None
    answered_by: dict[str, Any] | None = None
    answered_at: datetime | None = None


@dataclass(frozen=True)
class Repo:
    id: str
    project_id: str
    name: str
    url: str
    default_branch: str
    created_at: datetime


@dataclass(frozen=True)
class RepoLink:
    id: str
    project_id: str
    task_id: str
    repo_id: str
    agent: str
    branch: str
    target_branch: str | None
    title: str | None
    summary: str | None
    pr_url: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class RepoReport:
    id: str
    project_id: str
    task_id: str
    repo_id: str | None
    branch: str | None
    commit_sha: str | None
    tests: str | None
    summary: str | None
    reported_by: dict[str, Any]
    created_at: datetime


class NoteRepository:
    """Comments and agent updates, outputs (every version kept), questions."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- comments and agent updates -------------------------------------------------------

    def latest_note_time(self, task_id: str) -> datetime | None:
        """When the task's newest comment or agent update was written (None: there is none)."""
        c = t.task_comments.c
        value: datetime | None = self.conn.execute(
            select(func.max(c.created_at)).where(c.task_id == task_id)
        ).scalar_one()
        return value

    def add_comment(self, comment: TaskComment) -> None:
        self.conn.execute(t.task_comments.insert().values(**asdict(comment)))

    def comments(
        self, task_id: str, *, kinds: tuple[str, ...], limit: int, offset: int
    ) -> tuple[list[TaskComment], int]:
        """The task's comments of these kinds, newest first."""
        c = t.task_comments.c
        where = and_(c.task_id == task_id, c.kind.in_(kinds))
        total = self.conn.execute(
            select(func.count()).select_from(t.task_comments).where(where)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.task_comments)
            .where(where)
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return [TaskComment(**row._asdict()) for row in rows], int(total)

    # --- outputs --------------------------------------------------------------------------

    def output_history(self, task_id: str, name: str) -> tuple[int, datetime | None]:
        """How many versions an output name has on the task, and when the newest was saved."""
        c = t.task_outputs.c
        row = self.conn.execute(
            select(func.count(), func.max(c.created_at)).where(c.task_id == task_id, c.name == name)
        ).one()
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
            t.task_outputs.insert().values(
                id=output_id,
                project_id=project_id,
                task_id=task_id,
                name=name,
                content=content,
                author=author,
                created_at=at,
            )
        )

    def latest_outputs(
        self, task_id: str, *, limit: int, offset: int, newest_first: bool = False
    ) -> tuple[list[TaskOutput], int]:
        """The newest version of each output name (content cut to a preview), by name or, with
        `newest_first`, the most recently saved first."""
        c = t.task_outputs.c
        per_name = (
            select(
                c.name.label("name"),
                func.max(c.created_at).label("newest"),
                func.count().label("versions"),
            )
            .where(c.task_id == task_id)
            .group_by(c.name)
            .subquery()
        )
        total = self.conn.execute(select(func.count()).select_from(per_name)).scalar_one()
        rows = self.conn.execute(
            select(
                *_output_columns(preview=True),
                per_name.c.versions,
                per_name.c.versions.label("version"),
            )
            .join(per_name, and_(c.name == per_name.c.name, c.created_at == per_name.c.newest))
            .where(c.task_id == task_id)
            .order_by(*((c.created_at.desc(), c.id.desc()) if newest_first else (c.name,)))
            .limit(limit)
            .offset(offset)
        )
        return [TaskOutput(**row._asdict()) for row in rows], int(total)

    def output(self, task_id: str, name: str, version: int | None) -> TaskOutput | None:
        """One version of an output in full (None: the newest)."""
        c = t.task_outputs.c
        count, _ = self.output_history(task_id, name)
        wanted = count if version is None else version
        if not 1 <= wanted <= count:
            return None
        row = self.conn.execute(
            select(*_output_columns(preview=False))
            .where(c.task_id == task_id, c.name == name)
            .order_by(c.created_at, c.id)
            .offset(wanted - 1)
            .limit(1)
        ).one()
        return TaskOutput(**row._asdict(), version=wanted, versions=count)

    # --- questions ------------------------------------------------------------------------

    def add_question(self, question: TaskQuestion) -> None:
        self.conn.execute(t.task_questions.insert().values(**asdict(question)))

    def question(self, question_id: str) -> TaskQuestion | None:
        row = self.conn.execute(
            select(t.task_questions).where(t.task_questions.c.id == question_id)
        ).first()
        return TaskQuestion(**row._asdict()) if row else None

    def answer_question(
        self, question_id: str, *, answer: str, answered_by: dict[str, Any], at: datetime
    ) -> bool:
        """Record the answer unless someone answered first (one compare-and-set statement)."""
        c = t.task_questions.c
        result = self.conn.execute(
            t.task_questions.update()
            .where(c.id == question_id, c.answered_at.is_(None))
            .values(answer=answer, answered_by=answered_by, answered_at=at)
        )
        return result.rowcount == 1

    def task_questions(self, task_id: str, *, limit: int) -> tuple[list[TaskQuestion], int]:
        """The task's questions, newest first."""
        c = t.task_questions.c
        total = self.conn.execute(
            select(func.count()).select_from(t.task_questions).where(c.task_id == task_id)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.task_questions)
            .where(c.task_id == task_id)
            .order_by(c.asked_at.desc(), c.id.desc())
            .limit(limit)
        )
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
        return [TaskComment(**row._asdict()) for row in rows]

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
        c, o, q = t.task_comments.c, t.task_outputs.c, t.task_questions.c

        def of_kind(kind: str) -> Any:
            return (
                select(func.count()).where(c.task_id == task_id, c.kind == kind).scalar_subquery()
            )

        row = self.conn.execute(
            select(
                of_kind("comment"),
                of_kind("agent_update"),
                select(func.count(func.distinct(o.name)))
                .where(o.task_id == task_id)
                .scalar_subquery(),
                select(func.count()).where(q.task_id == task_id).scalar_subquery(),
                select(func.count())
                .where(q.task_id == task_id, q.answered_at.is_(None))
                .scalar_subquery(),
            )
        ).one()
        names = ("comment", "agent_update", "output", "question", "openQuestion")
        return {name: int(value) for name, value in zip(names, row, strict=True)}

    def question_counts(self, task_id: str) -> dict[str, int]:
        """How many questions the task has, and how many of them wait for an answer."""
        q = t.task_questions.c
        total, answered = self.conn.execute(
            select(func.count(), func.count(q.answered_at)).where(q.task_id == task_id)
        ).one()
        return {"question": int(total), "openQuestion": int(total) - int(answered)}

    def open_questions(
        self, project_id: str, *, limit: int, offset: int
    ) -> tuple[list[TaskQuestion], int]:
        """A project's unanswered questions, oldest first (the longest waiting on top)."""
        c = t.task_questions.c
        where = and_(c.project_id == project_id, c.answered_at.is_(None))
        total = self.conn.execute(
            select(func.count()).select_from(t.task_questions).where(where)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.task_questions)
            .where(where)
            .order_by(c.asked_at, c.id)
            .limit(limit)
            .offset(offset)
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


class RepoLinkRepository:
    """A project's code repositories, task × branch links to them, and status reports."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # --- repositories ---------------------------------------------------------------------

    def add_repo(self, repo: Repo) -> None:
        self.conn.execute(t.repos.insert().values(**asdict(repo)))

    def repo(self, repo_id: str) -> Repo | None:
        row = self.conn.execute(select(t.repos).where(t.repos.c.id == repo_id)).first()
        return Repo(**row._asdict()) if row else None

    def repo_named(self, project_id: str, name: str) -> Repo | None:
        row = self.conn.execute(
            select(t.repos).where(t.repos.c.project_id == project_id, t.repos.c.name == name)
        ).first()
        return Repo(**row._asdict()) if row else None

    def repos(self, project_id: str) -> list[Repo]:
        rows = self.conn.execute(
            select(t.repos).where(t.repos.c.project_id == project_id).order_by(t.repos.c.name)
        )
        return [Repo(**row._asdict()) for row in rows]

    # --- links ----------------------------------------------------------------------------

    def link(self, task_id: str, repo_id: str, agent: str, branch: str) -> RepoLink | None:
        c = t.task_repo_links.c
        row = self.conn.execute(
            select(t.task_repo_links).where(
                c.task_id == task_id, c.repo_id == repo_id, c.agent == agent, c.branch == branch
            )
        ).first()
        return RepoLink(**row._asdict()) if row else None

    def add_link(self, link: RepoLink) -> None:
        self.conn.execute(t.task_repo_links.insert().values(**asdict(link)))

    def update_link(self, link: RepoLink) -> None:
        c = t.task_repo_links.c
        self.conn.execute(
            t.task_repo_links.update()
            .where(c.id == link.id)
            .values(
                target_branch=link.target_branch,
                title=link.title,
                summary=link.summary,
                pr_url=link.pr_url,
                updated_at=link.updated_at,
            )
        )

    def task_links(self, task_id: str) -> list[RepoLink]:
        """The task's links, the most recently changed first."""
        c = t.task_repo_links.c
        rows = self.conn.execute(
            select(t.task_repo_links)
            .where(c.task_id == task_id)
            .order_by(c.updated_at.desc(), c.id.desc())
        )
        return [RepoLink(**row._asdict()) for row in rows]

    # --- status reports -------------------------------------------------------------------

    def add_report(self, report: RepoReport) -> None:
        self.conn.execute(t.task_repo_reports.insert().values(**asdict(report)))

    def task_reports(self, task_id: str, *, limit: int) -> tuple[list[RepoReport], int]:
        """The task's newest status reports first."""
        c = t.task_repo_reports.c
        total = self.conn.execute(
            select(func.count()).select_from(t.task_repo_reports).where(c.task_id == task_id)
        ).scalar_one()
        rows = self.conn.execute(
            select(t.task_repo_reports)
            .where(c.task_id == task_id)
            .order_by(c.created_at.desc(), c.id.desc())
            .limit(limit)
        )
        return [RepoReport(**row._asdict()) for row in rows], int(total)
