"""Web pages: spec files. The files of a project by folder (and its trash bin), one file shown
(markdown rendered, other text with line numbers, a window of 2,000 lines at a time), its
revisions and a diff between any two, editing from the version shown (a conflict keeps the
person's text beside the saved one), upload of new files, trash and restore, and the raw bytes
of any revision for download.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.responses import Response
from starlette.routing import BaseRoute

from crewboard.contract.specs import present
from crewboard.domain.files import MAX_WINDOW_LINES
from crewboard.domain.validation import parse_whole
from crewboard.errors import CrewboardError, RevisionConflict, ValidationFailed
from crewboard.jsonbody import MAX_UPLOAD_BODY
from crewboard.services.specs import comments, files
from crewboard.services.specs.file_lookup import FileRef
from crewboard.web.context import Page, project_routes
from crewboard.web.diffs import diff_rows
from crewboard.web.downloads import download
from crewboard.web.forms import show_conflict, show_refusal
from crewboard.web.pages.specs import review
from crewboard.web.pages.specs import tasks_md as checkbox_pages
from crewboard.web.pages.specs.tasks_md import checkboxes, leaving_choices, leaving_question
from crewboard.web.wording import STATUS_LABELS

PAGE_SIZE = 100
EDITABLE_BYTES = 1024 * 1024  # larger files are edited on disk and uploaded again
DIFF_BYTES = 1024 * 1024  # the most of each revision a diff compares


def _ref(page: Page) -> FileRef:
    return FileRef(file_id=page.request.path_params["file_id"])


def _whole(page: Page, name: str) -> int | None:
    raw = page.param(name).strip()
    return parse_whole(name, raw, minimum=1) if raw else None


# --- the list ----------------------------------------------------------------------------------


def spec_list(page: Page) -> Response:
    """Files by path, under a folder when one is chosen; the trash bin with `?trashed=1`."""
    folder = page.param("folder").strip() or None
    trashed = page.param("trashed") == "1"
    raw_offset = page.param("offset").strip()
    offset = parse_whole("offset", raw_offset) if raw_offset else 0
    found = present.list_spec_files(
        page.db,
        page.actor,
        project=page.project_key,
        path=folder,
        trashed=trashed,
        limit=PAGE_SIZE,
        offset=offset,
    )
    return page.render(
        "specs.html",
        title="Trash bin" if trashed else "Spec files",
        found=found,
        groups=_by_folder(found["files"]),
        folder=folder,
        trashed=trashed,
        offset=offset,
        page_size=PAGE_SIZE,
        typed={},
    )


def _by_folder(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Files grouped under their folder, in path order (the list is already in path order)."""
    groups: list[dict[str, Any]] = []
    for item in listed:
        folder, _, name = item["path"].rpartition("/")
        if not groups or groups[-1]["folder"] != folder:
            groups.append({"folder": folder, "files": []})
        groups[-1]["files"].append({**item, "name": name})
    return groups


def spec_upload(page: Page) -> Response:
    """A new file: its path and either typed text or a chosen file."""
    path = page.field("path").strip()
    uploaded = page.upload("file")
    content = uploaded[1] if uploaded else page.field("content").encode("utf-8")
    try:
        made = files.upload_spec_file(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            path=path or (uploaded[0] if uploaded else ""),
            content=content,
            idempotency_key=page.field("key") or None,
            answer=present.new_file_view,
        )
    except CrewboardError as error:
        show_refusal(page, error)
        listed = present.list_spec_files(page.db, page.actor, project=page.project_key)
        return page.render(
            "specs.html",
            status_code=error.http_status,
            title="Spec files",
            found=listed,
            groups=_by_folder(listed["files"]),
            folder=None,
            trashed=False,
            offset=0,
            page_size=PAGE_SIZE,
            typed={"path": path, "content": page.field("content")},
        )
    file = made.body["file"]
    return page.redirect(page.path(f"specs/files/{file['id']}"), notice=f"Added {file['path']}.")


def _workspace(page: Page) -> str | None:
    assert page.project is not None  # noqa: S101 - a project route
    workspace: str | None = page.project["workspaceId"]
    return workspace


# --- one file ----------------------------------------------------------------------------------


def spec_file(page: Page) -> Response:
    """The file: rendered or numbered, a window at a time; its revisions; a diff on request."""
    return _file_page(page, typed={"quote": page.param("quote")})


def _file_page(page: Page, *, typed: dict[str, str], status_code: int = 200) -> Response:
    revision = _whole(page, "revision")
    details = present.get_spec_file(
        page.db,
        page.actor,
        project=page.project_key,
        ref=_ref(page),
        include_trashed=True,
        revisions_limit=50,
        include_tasks=True,
    )
    file = details["file"]
    window = None
    problem = None
    offset = _whole(page, "offset") or 1
    if file["kind"] == "text":
        try:
            window = present.read_spec_file(
                page.db,
                page.actor,
                project=page.project_key,
                ref=_ref(page),
                offset=offset,
                limit=MAX_WINDOW_LINES,
                revision=revision,
                include_trashed=True,
            )
        except CrewboardError as error:
            problem = error.message
    compare = _diff(page, file) if page.param("from") and page.param("to") else None
    threads = present.list_spec_file_comments(
        page.db, page.actor, project=page.project_key, ref=_ref(page)
    )["threads"]
    markdown = file["path"].lower().endswith((".md", ".markdown")) and offset == 1
    spec, current = None, window is not None and window["revision"] == file["revisionCount"]
    if markdown and window is not None and not window["nextOffset"] and not compare:
        spec = review.review_page(window["text"], threads, current=current)
    boxes = checkboxes(page, file, window if markdown else None, details.get("tasks"), spec)
    return page.render(
        "spec_file.html",
        **boxes,
        # the anchors are in the current text: on an older revision the threads are only listed
        threads=review.placed_threads(threads, spec if current else None),
        spec=spec,
        open_threads=sum(1 for t in threads if t["status"] == "open" and not t["orphaned"]),
        typed=typed,
        status_code=status_code,
        title=file["path"],
        file=file,
        revisions=details["revisions"],
        file_tasks=details.get("tasks"),
        labels=STATUS_LABELS,
        window=window,
        numbered=_numbered(window),
        markdown=markdown,
        revision=revision,
        problem=problem,
        compare=compare,
    )


def _numbered(window: dict[str, Any] | None) -> list[tuple[int, str]]:
    if window is None:
        return []
    lines = window["text"].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [(window["offset"] + n, line.rstrip("\r")) for n, line in enumerate(lines)]


def _read_bytes(
    page: Page, *, revision: int | None = None, trashed: bool = False
) -> tuple[dict[str, Any], bytes]:
    """The page's file at a revision (the newest when None): its view and its bytes."""
    project, ref = page.project_key, _ref(page)
    return present.read_file_bytes(
        page.db, page.actor, project=project, ref=ref, revision=revision, include_trashed=trashed
    )


def _diff(page: Page, file: dict[str, Any]) -> dict[str, Any]:
    """Two revisions side by side as a unified diff: each line kept, added or removed."""
    older, newer = (parse_whole(name, page.param(name), minimum=1) for name in ("from", "to"))
    texts = []
    for number in (older, newer):
        view, data = _read_bytes(page, revision=number, trashed=True)
        if view["kind"] != "text" or len(data) > DIFF_BYTES:
            raise ValidationFailed.field(
                "from", "only text revisions up to 1 MiB are compared here; download them instead."
            )
        texts.append(data.decode("utf-8"))
    rows = diff_rows(texts[0], texts[1], f"revision {older}", f"revision {newer}")
    return {"from": older, "to": newer, "rows": rows, "same": not rows, "path": file["path"]}


# --- editing -----------------------------------------------------------------------------------


def spec_edit(page: Page) -> Response:
    """The whole text in a form, with the version it was read at."""
    view, data = _read_bytes(page)
    editable = view["kind"] == "text" and len(data) <= EDITABLE_BYTES
    text = data.decode("utf-8") if editable else ""
    return _edit_form(page, view, text, editable=editable, expected=view["contentVersion"])


def _edit_form(
    page: Page,
    view: dict[str, Any],
    text: str,
    *,
    editable: bool = True,
    expected: Any,
    theirs: str | None = None,
    status_code: int = 200,
    leaving: list[dict[str, Any]] | None = None,
) -> Response:
    """The edit form holding `text`, saved from version `expected` (`theirs` beside it after a
    conflict; `leaving`: the tasks whose lines it removes, to choose what becomes of each)."""
    return page.render(
        "spec_edit.html",
        status_code=status_code,
        leaving=leaving,
        chosen=leaving_choices(page),
        labels=STATUS_LABELS,
        title=f"Edit {view['path']}",
        file=view,
        text=text,
        editable=editable,
        expected=expected,
        theirs=theirs,
    )


def spec_save(page: Page) -> Response:
    """Save the form's text from the version it showed; a conflict keeps it beside theirs."""
    text = page.field("content")
    expected = page.field("expected_version")
    try:
        saved = files.update_spec_file(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            ref=_ref(page),
            content=text.encode("utf-8"),
            expected_version=expected,
            idempotency_key=page.field("key") or None,
            answer=present.saved_view,
            removed_tasks=leaving_choices(page),
        )
    except RevisionConflict as conflict:
        show_conflict(page, conflict, "this file")
        view, data = _read_bytes(page)
        theirs = data.decode("utf-8", errors="replace")
        return _edit_form(
            page, view, text, expected=view["contentVersion"], theirs=theirs, status_code=409
        )
    except CrewboardError as error:
        view, _data = _read_bytes(page, trashed=True)
        leaving = leaving_question(error)
        if leaving is None:
            show_refusal(page, error)
        return _edit_form(
            page, view, text, expected=expected, status_code=error.http_status, leaving=leaving
        )
    file = saved.body["file"]
    return page.redirect(
        page.path(f"specs/files/{file['id']}"),
        notice=f"Saved {file['path']}: revision {file['revisionCount']}.{_left(page)}",
    )


def _left(page: Page) -> str:
    """What the save did with the tasks whose lines it removed, as the person chose (a choice
    for a task whose line the text kept in the end did nothing, and is not told)."""
    chosen = leaving_choices(page)
    if not chosen:
        return ""
    still = (
        present.get_spec_file(
            page.db, page.actor, project=page.project_key, ref=_ref(page), include_tasks=True
        ).get("tasks")
        or []
    )
    gone = [c for task_id, c in chosen.items() if task_id not in {t["id"] for t in still}]
    done, kept = gone.count("done"), gone.count("keep")
    said = ""
    if done:
        said += f" {done} task{'s' if done > 1 else ''} moved to Done."
    if kept:
        said += f" {kept} task{'s' if kept > 1 else ''} kept on the board, no longer in the file."
    return said


def spec_trash(page: Page) -> Response:
    done = present.trash_view(
        files.move_spec_file_to_trash(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            ref=_ref(page),
        )
    )
    return page.redirect(
        page.path("specs"), notice=f"Moved {done['file']['path']} to the trash bin."
    )


def spec_restore(page: Page) -> Response:
    done = present.trash_view(
        files.restore_spec_file_from_trash(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            ref=_ref(page),
        )
    )
    file = done["file"]
    return page.redirect(page.path(f"specs/files/{file['id']}"), notice=f"Restored {file['path']}.")


# --- comment threads ---------------------------------------------------------------------------


def _back_to_file(page: Page, file_id: str, notice: str, thread_id: str) -> Response:
    """Back to the file, at the thread just written to (the reply form names its file: a
    reply answers only the comment)."""
    anchor = f"#thread-{quote(thread_id)}"
    return page.redirect(page.path(f"specs/files/{quote(file_id)}") + anchor, notice=notice)


def thread_start(page: Page) -> Response:
    """A thread on the passage the person selected on the page (or, without the page's script,
    pasted), with its first comment. A refusal (a passage no longer in the file, or found
    twice) shows the page again with both kept, in the page's words."""
    try:
        at: int | None = None
        quote, prefix, suffix = page.field("quote"), page.field("prefix"), page.field("suffix")
        if page.field("sel_start"):
            passage, current = _selected(page)
            quote, prefix, suffix = passage.quote, passage.prefix, passage.suffix
            at = passage.start if current else None
        elif not quote.strip():
            raise ValidationFailed(
                "Select the words you comment on in the text, then press Comment.",
                {"field": "quote"},
            )
        made = comments.create_spec_file_comment_thread(
            page.db,
            page.actor,
            project=page.project_key,
            workspace_id=_workspace(page),
            ref=_ref(page),
            anchor_quote=quote,
            anchor_prefix=prefix or None,
            anchor_suffix=suffix or None,
            anchor_start=at,
            body=page.field("body"),
            idempotency_key=page.field("key") or None,
            answer=present.thread_answer(page.actor),
        )
    except CrewboardError as error:
        shown = review.for_people(error) if isinstance(error, ValidationFailed) else error
        show_refusal(page, shown)
        typed = {"quote": page.field("quote"), "body": page.field("body")}
        return _file_page(page, typed=typed, status_code=error.http_status)
    file_id, thread_id = page.request.path_params["file_id"], made.body["thread"]["id"]
    return _back_to_file(page, file_id, "Started a thread.", thread_id)


def _selected(page: Page) -> tuple[review.Passage, bool]:
    """The source passage of the words selected on the page, in the revision it showed, and
    whether that is the current revision (then the passage is exactly where it says).

    Raises:
        ValidationFailed: the selection is not in that revision's text as the page showed it.
    """
    selection = review.Selection.parse(
        page.field("sel_revision"), page.field("sel_start"), page.field("sel_end"),
        page.field("sel_text"),
    )  # fmt: skip
    view, data = _read_bytes(page, revision=selection.revision, trashed=True)
    passage = review.passage_of(data.decode("utf-8", errors="replace"), selection)
    return passage, view["revision"] == view["revisionCount"]


def _thread_id(page: Page) -> str:
    return str(page.request.path_params["thread_id"])


def thread_reply(page: Page) -> Response:
    comments.reply_spec_file_comment_thread(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=_workspace(page),
        thread_id=_thread_id(page),
        body=page.field("body"),
        idempotency_key=page.field("key") or None,
        answer=present.comment_answer(page.actor),
    )
    return _back_to_file(page, page.field("file_id"), "Replied.", _thread_id(page))


def thread_resolve(page: Page) -> Response:
    return _set_thread_state(page, present.resolve_thread, "Resolved the thread.")


def thread_reopen(page: Page) -> Response:
    return _set_thread_state(page, present.reopen_thread, "Reopened the thread.")


def _set_thread_state(page: Page, change: Callable[..., dict[str, Any]], notice: str) -> Response:
    """Resolve or reopen the page's thread, then back to its file."""
    done = change(
        page.db,
        page.actor,
        project=page.project_key,
        workspace_id=_workspace(page),
        thread_id=_thread_id(page),
    )
    return _back_to_file(page, done["thread"]["fileId"], notice, done["thread"]["id"])


def spec_raw(page: Page) -> Response:
    """A revision's bytes, as a download (never shown inline: a file is not a page)."""
    view, data = _read_bytes(page, revision=_whole(page, "revision"), trashed=True)
    name = view["path"].rsplit("/", 1)[-1]
    kind = "text/plain; charset=utf-8" if view["kind"] == "text" else "application/octet-stream"
    return download(data, name, kind, inline=False)


ROUTES: list[BaseRoute] = [
    *project_routes("specs", get=spec_list, post=spec_upload, body_limit=MAX_UPLOAD_BODY),
    *project_routes("specs/files/{file_id}", get=spec_file),
    *project_routes(
        "specs/files/{file_id}/edit", get=spec_edit, post=spec_save, body_limit=MAX_UPLOAD_BODY
    ),
    *project_routes("specs/files/{file_id}/trash", post=spec_trash),
    *project_routes("specs/files/{file_id}/restore", post=spec_restore),
    *project_routes("specs/files/{file_id}/raw", get=spec_raw),
    *checkbox_pages.ROUTES,
    *project_routes("specs/files/{file_id}/threads", post=thread_start),
    *project_routes("specs/threads/{thread_id}/reply", post=thread_reply),
    *project_routes("specs/threads/{thread_id}/resolve", post=thread_resolve),
    *project_routes("specs/threads/{thread_id}/reopen", post=thread_reopen),
]
