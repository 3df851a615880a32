"""Context packs and context receipts: what `get_task` hands an agent, and the record of it.

A pack carries in full the brief, the parent, the blockers, the project state, the accepted
records the task names or matches, and the `decisions` and `context` documents; every other
record of the project is listed in an index (id, title, one line). The pack's compact JSON
never exceeds its budget (PACK_BUDGET, less when get_task's answer needs the room; each
share below scales with it): a record that does not fit moves to the index, unless it is
larger than RECORD_BYTES on its own: then its content is cut to fit, like a text too long for
its share (brief, state, documents), as services/text_windows.py cuts: a prefix flagged
`<field>Truncated` with `<field>Length` (get_project_memory reads the rest in windows).
Blockers and missing context items past their share are counted (`blockersTotal`,
`missingContextItemsTotal`).

A receipt lists every input handed out in full with its version, for a token that can hand
in. When a draft built from it is reviewed, `changed_inputs` names what changed since. A
project with no accepted memory (no record, no document with text) gets no receipt: the pack
then carries `contextReceiptUnavailable` with the reason (for every reader), so the agent
submits null.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from crewboard.domain.board.context import ContextPack, Receipt
from crewboard.domain.board.tasks import Task
from crewboard.domain.identity.access import Role, Scope, missing_permission
from crewboard.domain.identity.records import Actor
from crewboard.domain.ids import new_id
from crewboard.domain.memory import DocumentText, ProjectDocument, RecordText
from crewboard.domain.projects import Project
from crewboard.errors import ValidationFailed
from crewboard.services.identity.access import access_project
from crewboard.services.text_windows import (
    cut_text,
    fitting_chars,
    json_size,
    leading_rows,
    text_size,
)
from crewboard.storage.board.context import ContextRepository
from crewboard.storage.uow import UnitOfWork

PACK_BUDGET = 32 * 1024  # bytes of the pack's compact JSON (UTF-8)
MATCH_LIMIT = 8  # records matched through the text index, handed out in full
RECEIPT_RETENTION = timedelta(days=30)  # receipts no draft names are kept this long
MATCH_WORDS = 8  # significant words of the task a match is searched with
INDEX_CHUNK = 100  # index rows read at a time, until the budget is full
LINE_CHARS = 160
# Shares of a full PACK_BUDGET (scaled to a smaller budget) that keep room for records
# whatever the size of the task's own texts.
BRIEF_BYTES = 8 * 1024
PARENT_BRIEF_BYTES = 2 * 1024
STATE_BYTES = 6 * 1024
DOCUMENT_BYTES = 6 * 1024
RECORD_BYTES = 8 * 1024  # a record larger than this alone is cut rather than only indexed
MIN_CUT_RECORD = 1024  # ... when at least this much room is left
INDEX_RESERVE = 1024  # kept for the index, so a named record that did not fit is listed there
MAX_BLOCKERS = 50
BLOCKERS_BYTES = 4 * 1024  # blockers past it are counted in blockersTotal
MISSING_BYTES = 1024  # missing context item ids past it are counted in missingContextItemsTotal
PACK_DOCUMENTS = (ProjectDocument.DECISIONS, ProjectDocument.CONTEXT)
DOCUMENT_TITLES = {
    ProjectDocument.OVERVIEW: "Overview",
    ProjectDocument.CONTEXT: "Context",
    ProjectDocument.DECISIONS: "Decisions",
    ProjectDocument.NOTES: "Notes",
    ProjectDocument.LEGAL: "Asset rights",
}
NO_MEMORY_REASON = "this project has no accepted memory yet; nothing to record"
_WORD = re.compile(r"[^\W_]+")
# A word list reads best as one string.
_STOPWORDS_TEXT = (
    "the and for with that this from into onto over under about after before when where which "
    "while what who whom why how are was were been being have has had not but all any can "
    "could should would will shall may might must our ours your yours their theirs its his "
    "her them they you she him also than then there here these those such each every some "
    "more most other only own same very just out off per via use used using make made add new "
    "task todo fix"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def context_of(uow: UnitOfWork) -> ContextRepository:
    return ContextRepository(uow.conn)


# --- the pack --------------------------------------------------------------------------------


def context_for_task(
    uow: UnitOfWork,
    actor: Actor,
    project: Project,
    task: Task,
    *,
    parent: Task | None,
    blockers: list[Task],
    budget: int = PACK_BUDGET,
) -> ContextPack:
    """The context pack of `task` within `budget` bytes, with a receipt id when the actor is a
    token that can hand in (or the reason no receipt could be made). Writes the receipt row in
    this unit of work."""
    repo = context_of(uow)
    total = repo.count_records(project.id)
    named, missing = _named_records(repo, project, task) if total else ([], _named_ids(task)[0])
    shown = {r.id for r in named}
    matched = (
        [
            r
            for r in repo.matching(project.id, significant_words(task), MATCH_LIMIT + len(shown))
            if r.id not in shown
        ][:MATCH_LIMIT]
        if total > len(shown)
        else []
    )
    names = [*PACK_DOCUMENTS, *(d for d in _named_documents(task) if d not in PACK_DOCUMENTS)]
    documents = repo.documents(project.id, names)
    builder = _PackBuilder(
        project.key,
        task,
        parent,
        blockers,
        uow.state.get(project.id),
        missing,
        min(budget, PACK_BUDGET),
    )
    builder.add_records(named)
    builder.add_documents([documents[n] for n in names if n in documents])
    builder.add_records(matched)
    builder.add_index(repo, project.id, total)
    pack = builder.pack()
    if total == 0 and not repo.has_documents(project.id):
        # Said to every reader, so a person (the CLI) and an agent read the same answer.
        return ContextPack(pack, no_receipt=NO_MEMORY_REASON)
    if _can_hand_in(uow, actor, project):
        return ContextPack(pack, receipt_id=_write_receipt(uow, actor, project.id, builder))
    return ContextPack(pack)


def needs_receipt(actor: Actor) -> bool:
    """Whether a full read by `actor` may write a receipt (so must run as a write)."""
    return actor.token is not None and Scope.DRAFTS_CREATE in actor.scopes


def significant_words(task: Task) -> list[str]:
    """Up to MATCH_WORDS distinct words of the title, tags and brief a text search looks for."""
    source = " ".join([task.title, *task.tags, task.brief])
    words = (w for w in _WORD.findall(source.lower()) if len(w) > 2 and not w.isdigit())
    return [w for w in dict.fromkeys(words) if w not in _STOPWORDS][:MATCH_WORDS]


def index_line(summary: str, content: str) -> str:
    """One line for an index entry: the summary's first line, else the content's."""
    for text in (summary, content):
        for raw in text.splitlines():
            if line := raw.strip():
                return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
    return ""


def _named_ids(task: Task) -> tuple[list[str], list[str]]:
    """Ids the task names as context: its context items, and the refIds of its context refs."""
    documents = {str(d) for d in ProjectDocument}
    items = [i for i in task.context_item_ids if i not in documents]
    refs = [str(r.get("refId")) for r in task.context_refs if r.get("refId")]
    return items, refs


def _named_documents(task: Task) -> list[ProjectDocument]:
    return [ProjectDocument(i) for i in task.context_item_ids if i in set(ProjectDocument)]


def named_records(uow: UnitOfWork, project: Project, task: Task) -> list[RecordText]:
    """The accepted records of `project` that `task` names, in the order it names them."""
    return _named_records(context_of(uow), project, task)[0]


def _named_records(
    repo: ContextRepository, project: Project, task: Task
) -> tuple[list[RecordText], list[str]]:
    """Records the task names, in its order; context item ids that are no record of this project.

    A ref's refId may name a file or a link: only those that are records count, and the others
    are not reported missing.
    """
    items, refs = _named_ids(task)
    found = repo.records(project.id, [*items, *refs])
    ordered = [found[i] for i in dict.fromkeys([*items, *refs]) if i in found]
    return ordered, [i for i in items if i not in found]


def _can_hand_in(uow: UnitOfWork, actor: Actor, project: Project) -> bool:
    if not needs_receipt(actor):
        return False
    role = access_project(uow, actor, project.id).role
    return missing_permission(actor.scopes, role, Scope.DRAFTS_CREATE, Role.WRITE) is None


def _size(value: Any) -> int:
    return json_size(value)


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` within `limit` bytes as a JSON string (quotes included): a prefix when it was cut,
    and whether it was."""
    if text_size(text) + 2 <= limit:
        return text, False
    return text[: fitting_chars(text, limit - 2)], True


def brief_version(brief: str) -> str:
    return hashlib.sha256(brief.encode()).hexdigest()[:16]


@dataclass
class _PackBuilder:
    """Fills a pack in priority order while keeping its JSON inside `budget`."""

    project_key: str
    task: Task
    parent: Task | None
    blockers: list[Task]
    state: Any
    missing: list[str]
    budget: int = PACK_BUDGET
    records: list[dict[str, Any]] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)
    overflow: list[dict[str, Any]] = field(default_factory=list)
    index: list[dict[str, Any]] = field(default_factory=list)
    index_total: int = 0
    used: int = 0
    # What was handed out, for the receipt.
    inputs: list[dict[str, Any]] = field(default_factory=list)

    def _share(self, full: int) -> int:
        """A share set for a full PACK_BUDGET, scaled to this pack's budget."""
        return full * self.budget // PACK_BUDGET

    def __post_init__(self) -> None:
        self.used = _size(self._frame()) + 64  # room for the index counts to grow

    def _frame(self) -> dict[str, Any]:
        brief, brief_cut = _cut(self.task.brief, self._share(BRIEF_BYTES))
        content, state_cut = _cut(self.state.content, self._share(STATE_BYTES))
        frame: dict[str, Any] = {
            "brief": brief,
            "task": {
                "id": self.task.id,
                "key": f"{self.project_key}-{self.task.number}",
                "title": self.task.title,
                "type": str(self.task.type),
                "status": str(self.task.status),
                "revision": self.task.revision,
            },
            "parent": self._parent(),
            "blockers": leading_rows(
                [
                    {"id": b.id, "number": b.number, "title": b.title, "status": str(b.status)}
                    for b in self.blockers[:MAX_BLOCKERS]
                ],
                self._share(BLOCKERS_BYTES),
            ),
            "records": [],
            "memoryIndex": [],
            "memoryIndexTotal": 0,
            "memoryIndexCut": False,
            "documents": [],
            "projectState": {"revision": self.state.revision, "content": content},
            "missingContextItems": leading_rows(self.missing, self._share(MISSING_BYTES)),
        }
        if brief_cut:
            frame["briefTruncated"] = True
            frame["briefLength"] = len(self.task.brief)
        if state_cut:
            frame["projectState"]["contentTruncated"] = True
            frame["projectState"]["contentLength"] = len(self.state.content)
        if len(frame["blockers"]) < len(self.blockers):
            frame["blockersTotal"] = len(self.blockers)
        if len(frame["missingContextItems"]) < len(self.missing):
            frame["missingContextItemsTotal"] = len(self.missing)
        return frame

    def _parent(self) -> dict[str, Any] | None:
        if self.parent is None:
            return None
        brief, cut = _cut(self.parent.brief, self._share(PARENT_BRIEF_BYTES))
        parent = {
            "id": self.parent.id,
            "number": self.parent.number,
            "title": self.parent.title,
            "brief": brief,
        }
        if cut:
            parent["briefTruncated"] = True
            parent["briefLength"] = len(self.parent.brief)
        return parent

    def _take(self, item: dict[str, Any], reserve: int = 0) -> bool:
        cost = _size(item) + 1
        if self.used + cost > self.budget - reserve:
            return False
        self.used += cost
        return True

    def add_records(self, records: list[RecordText]) -> None:
        for record in records:
            full = {
                "id": record.id,
                "title": record.title,
                "summary": record.summary,
                "content": record.content,
                "collection": record.collection,
                "document": record.document,
                "status": record.status,
                "version": record.version,
            }
            reserve = self._share(INDEX_RESERVE)
            room = min(self._share(RECORD_BYTES), self.budget - reserve - self.used - 1)
            if _size(full) > self._share(RECORD_BYTES) and room >= MIN_CUT_RECORD:
                full = cut_text(full, "content", room)
            if self._take(full, reserve):
                self.records.append(full)
                self.inputs.append(
                    {
                        "kind": "record",
                        "id": record.id,
                        "version": record.version,
                        "title": record.title,
                    }
                )
            else:
                self.overflow.append(
                    _entry(record.id, record.title, record.summary, record.content)
                )

    def add_documents(self, documents: list[DocumentText]) -> None:
        for document in documents:
            if not document.content.strip():
                continue
            reserve = self._share(INDEX_RESERVE)
            room = min(self._share(DOCUMENT_BYTES), self.budget - reserve - self.used - 128)
            if room < 256:
                return
            content, cut = _cut(document.content, room)
            item: dict[str, Any] = {
                "name": document.name,
                "version": document.version,
                "content": content,
            }
            if cut:
                item["contentTruncated"] = True
                item["contentLength"] = len(document.content)
            if self._take(item, reserve):
                self.documents.append(item)
                self.inputs.append(
                    {"kind": "document", "id": document.name, "version": document.version}
                )

    def add_index(self, repo: ContextRepository, project_id: str, total: int) -> None:
        """The records not handed out in full: those that did not fit first, then the newest."""
        full = {r["id"] for r in self.records}
        self.index_total = total - len(full)
        if not self._take_entries(self.overflow):
            return
        skip = full | {e["id"] for e in self.overflow}
        # Read in chunks: the budget holds a few hundred lines at most, whatever the project.
        for offset in range(0, total, INDEX_CHUNK):
            chunk = repo.index(project_id, skip, limit=INDEX_CHUNK, offset=offset)
            entries = [_entry(e.id, e.title, e.summary_start, e.content_start) for e in chunk]
            if not self._take_entries(entries):
                return

    def _take_entries(self, entries: list[dict[str, Any]]) -> bool:
        """Index `entries` while they fit; False once one did not."""
        for entry in entries:
            if not self._take(entry):
                return False
            self.index.append(entry)
        return True

    def pack(self) -> dict[str, Any]:
        pack = self._frame()
        pack["records"] = self.records
        pack["memoryIndex"] = self.index
        pack["memoryIndexTotal"] = self.index_total
        pack["memoryIndexCut"] = len(self.index) < self.index_total
        pack["documents"] = self.documents
        while _size(pack) > self.budget and self.index:  # a safety net; the sums above hold
            self.index.pop()
            pack["memoryIndexCut"] = True
        return pack

    def receipt_items(self, project_id: str) -> list[dict[str, Any]]:
        items = list(self.inputs)
        items.append({"kind": "projectState", "id": project_id, "version": self.state.revision})
        for task in (self.task, self.parent):
            if task is not None:
                items.append(
                    {
                        "kind": "brief",
                        "id": task.id,
                        "version": brief_version(task.brief),
                        "title": task.title,
                    }
                )
        return items


def _entry(record_id: str, title: str, summary: str, content: str) -> dict[str, Any]:
    return {"id": record_id, "title": title, "line": index_line(summary, content)}


def _write_receipt(uow: UnitOfWork, actor: Actor, project_id: str, builder: _PackBuilder) -> str:
    assert actor.token is not None  # noqa: S101 - only tokens get receipts (needs_receipt)
    receipt_id = new_id("rcp")
    context_of(uow).add_receipt(
        Receipt(
            id=receipt_id,
            project_id=project_id,
            task_id=builder.task.id,
            token_id=actor.token.id,
            items=builder.receipt_items(project_id),
            created_at=uow.now,
        )
    )
    # Every full read by an agent writes a receipt: old ones no hand-in names are let go here,
    # a batch at a time, so the table stays bounded without a separate job.
    context_of(uow).prune_receipts(project_id, uow.now - RECEIPT_RETENTION)
    return receipt_id


# --- receipts ----------------------------------------------------------------------------------


def check_receipt(uow: UnitOfWork, actor: Actor, receipt_id: str, task: Task) -> str:
    """The receipt id, once it is known to be one this token got from reading `task`.

    Raises:
        ValidationFailed: (field contextReceiptId) no such receipt, a receipt handed to another
            token (or the actor is no token), or one made for another task.
    """
    receipt = context_of(uow).receipts([receipt_id]).get(receipt_id)
    mine = actor.token is not None and receipt is not None and receipt.token_id == actor.token.id
    if receipt is None or not mine:
        raise ValidationFailed.field(
            "contextReceiptId",
            f"{receipt_id!r} is not a receipt your token was given; pass the contextReceiptId "
            "of the get_task read you worked from, or null.",
        )
    if receipt.task_id != task.id:
        raise ValidationFailed.field(
            "contextReceiptId",
            f"{receipt_id!r} was given for another task, not {task.id}; read this task with "
            "get_task and pass that receipt, or null.",
        )
    return receipt_id


def changed_inputs(uow: UnitOfWork, receipt_id: str | None) -> list[dict[str, Any]]:
    """The inputs of a receipt whose current version differs from the one handed out."""
    if receipt_id is None:
        return []
    return changed_inputs_many(uow, [receipt_id])[receipt_id]


def changed_inputs_many(
    uow: UnitOfWork, receipt_ids: Iterable[str]
) -> dict[str, list[dict[str, Any]]]:
    """`changed_inputs` for many receipts in a few queries; an unknown receipt has none."""
    wanted = list(dict.fromkeys(receipt_ids))
    repo = context_of(uow)
    receipts = repo.receipts(wanted)
    now = _Current.load(repo, receipts.values())
    return {
        rid: [c for item in receipts[rid].items if (c := now.change(receipts[rid], item))]
        if rid in receipts
        else []
        for rid in wanted
    }


@dataclass(frozen=True)
class _Current:
    """The current versions of everything a set of receipts names."""

    records: dict[str, tuple[str, int]]
    documents: dict[tuple[str, str], int]
    states: dict[str, int]
    briefs: dict[str, tuple[str, str]]

    @classmethod
    def load(cls, repo: ContextRepository, receipts: Iterable[Receipt]) -> _Current:
        receipts = list(receipts)
        items = [item for r in receipts for item in r.items]
        projects = {r.project_id for r in receipts}
        return cls(
            records=repo.record_versions(i["id"] for i in items if i["kind"] == "record"),
            documents=repo.document_versions(projects),
            states=repo.state_revisions(projects),
            briefs=repo.task_briefs(i["id"] for i in items if i["kind"] == "brief"),
        )

    def change(self, receipt: Receipt, item: dict[str, Any]) -> dict[str, Any] | None:
        kind, item_id, then = item["kind"], item["id"], item["version"]
        title: str = item.get("title") or item_id
        now: Any
        if kind == "record":
            title, now = self.records.get(item_id, (title, None))
        elif kind == "document":
            now = self.documents.get((receipt.project_id, item_id))
            title = DOCUMENT_TITLES.get(ProjectDocument(item_id), item_id)
        elif kind == "projectState":
            now, title = self.states.get(item_id, 0), "Project state"
        else:
            found = self.briefs.get(item_id)
            now = brief_version(found[1]) if found else None
            title = found[0] if found else title
        if now == then:
            return None
        return {
            "kind": kind,
            "id": item_id,
            "title": title,
            "versionThen": then,
            "versionNow": now,
            "removed": now is None,
        }
