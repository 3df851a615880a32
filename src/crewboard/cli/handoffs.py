"""Operator commands for shift handoffs: list a project's, show one, write yours (as the
person `--as` names, the owner by default), add an action item and set its status."""

from __future__ import annotations

from typing import Any

import click

from crewboard.cli.common import (
    State,
    acting_person,
    as_option,
    check_args,
    emit,
    guarded,
    json_option,
    pass_state,
)
from crewboard.cli.operations import run_declared
from crewboard.contract.handoffs import present
from crewboard.contract.handoffs.handoffs import ListHandoffs
from crewboard.domain.handoffs import BODY_LABELS, WIRE_BODIES, Bodies, ItemStatus
from crewboard.services.handoffs import commands, queries
from crewboard.services.identity.access import ANY_WORKSPACE
from crewboard.storage.database import Database

ITEM_STATUSES = [status.value for status in ItemStatus]


@click.group("handoff")
def handoff_group() -> None:
    """Shift handoffs: one per person, project and day."""


def _line(h: dict[str, Any]) -> str:
    who = h["author"]["displayName"] or h["author"]["email"]
    return (
        f"{h['id']}  {h['date']}  {who}  {h['sourceTimeZone']} -> {h['destinationTimeZone']}"
        f"  items: {h['actionItemCount']}"
    )


@handoff_group.command("list")
@click.argument("project")
@click.option("--author", default=None, help="A person (id or email).")
@click.option("--recipient", default=None, help="A person (id or email).")
@click.option("--since", default=None, help="YYYY-MM-DD, inclusive.")
@click.option("--until", default=None, help="YYYY-MM-DD, inclusive.")
@click.option("--limit", type=int, default=None, help=f"1 to {present.MAX_PAGE}.")
@click.option("--offset", type=int, default=None)
@as_option
@json_option
@pass_state
def handoff_list(
    state_: State,
    project: str,
    author: str | None,
    recipient: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    offset: int | None,
    as_email: str | None,
    as_json: bool,
) -> None:
    """A project's handoffs, newest day first."""

    def act(db: Database) -> None:
        args = check_args(ListHandoffs, {
            "projectId": project, "author": author, "recipient": recipient, "since": since,
            "until": until, "limit": limit, "offset": offset,
        })  # fmt: skip
        page = queries.list_handoffs(
            db, acting_person(db, as_email), project=args.project_id, author=args.author,
            recipient=args.recipient, since=args.since, until=args.until, limit=args.limit,
            offset=args.offset,
        )  # fmt: skip
        found = present.handoff_page_view(page)
        emit(as_json, found, lambda: "\n".join(map(_line, found["handoffs"])) or "none")

    guarded(state_, as_json, act)


@handoff_group.command("show")
@click.argument("handoff_id")
@as_option
@json_option
@pass_state
def handoff_show(state_: State, handoff_id: str, as_email: str | None, as_json: bool) -> None:
    """A handoff whole: its bodies, linked tasks and first action items."""

    def text(found: dict[str, Any]) -> str:
        h = found["handoff"]
        lines = [_line(h)]
        for name, label in BODY_LABELS:
            lines += [f"\n{label}:", h[WIRE_BODIES[name]] or "-"]
        lines += [f"task {t['key']}: {t['title']}" for t in h["linkedTasks"]]
        lines += [f"item {i['id']} [{i['status']}] {i['text']}" for i in h["actionItems"]]
        return "\n".join(lines)

    run_declared(
        state_, "get_handoff", {"handoff_id": handoff_id}, as_email=as_email, as_json=as_json,
        human=text,
    )  # fmt: skip


@handoff_group.command("write")
@click.argument("project")
@click.option("--completed", default="")
@click.option("--in-progress", default="")
@click.option("--blockers", default="")
@click.option("--next-steps", default="")
@click.option("--date", "day", default=None, help="YYYY-MM-DD; today in the source zone.")
@click.option("--reverse", is_flag=True, help="Shift B hands over to shift A.")
@click.option("--recipient", "recipients", multiple=True, help="A person (repeat for more).")
@click.option("--task", "tasks", multiple=True, help="A task key to link (repeat for more).")
@click.option("--notify", is_flag=True, help="Tell the recipients in the app.")
@click.option("--email", is_flag=True, help="Email the recipients.")
@as_option
@json_option
@pass_state
def handoff_write(state_: State, project: str, completed: str, in_progress: str, blockers: str,
                  next_steps: str, day: str | None, reverse: bool, recipients: tuple[str, ...],
                  tasks: tuple[str, ...], notify: bool, email: bool, as_email: str | None,
                  as_json: bool) -> None:  # fmt: skip
    """Write your handoff of a project for a day."""

    def act(db: Database) -> None:
        zones = present.day_sheet(db, acting_person(db, as_email), project=project, day=None)
        a, b = zones["zones"]["a"], zones["zones"]["b"]
        person = acting_person(db, as_email)
        made = commands.create_handoff(
            db, person, project=project, workspace_id=ANY_WORKSPACE,
            bodies=Bodies(completed, in_progress, blockers, next_steps), day=day,
            source_time_zone=b if reverse else a, destination_time_zone=a if reverse else b,
            linked_task_ids=list(tasks), recipients=list(recipients),
            send_notification=notify, send_email=email, answer=present.made_view(person),
        ).body  # fmt: skip
        told = made["notifications"]
        said = [f"wrote {_line(made['handoff'])}"]
        if notify or email:
            said.append(f"told in the app: {told['inApp']}, emailed: {told['emailsQueued']}")
            said += [why for why in (told.get("emailNotSent"), told.get("note")) if why]
        emit(as_json, made, lambda: "\n".join(said))

    guarded(state_, as_json, act)


@handoff_group.command("add-item")
@click.argument("handoff_id")
@click.argument("text")
@click.option("--assignee", default=None, help="A person (id or email).")
@click.option("--due", default=None, help="YYYY-MM-DD.")
@click.option("--status", default=None, help=f"{', '.join(ITEM_STATUSES)}; open by default.")
@as_option
@json_option
@pass_state
def handoff_add_item(state_: State, handoff_id: str, text: str, assignee: str | None,
                     due: str | None, status: str | None, as_email: str | None,
                     as_json: bool) -> None:  # fmt: skip
    """Add an action item to a handoff."""
    run_declared(
        state_,
        "create_handoff_action_item",
        {"handoff_id": handoff_id, "text": text, "assignee": assignee, "due_date": due,
         "status": status},
        as_email=as_email,
        as_json=as_json,
        human=lambda made: "added {id} [{status}] {text}".format_map(made["actionItem"]),
    )  # fmt: skip


@handoff_group.command("set-item")
@click.argument("item_id")
@click.option("--status", type=click.Choice(ITEM_STATUSES))
@click.option("--assignee", default=None, help="A person (id or email); 'none' clears.")
@as_option
@json_option
@pass_state
def handoff_set_item(state_: State, item_id: str, status: str | None, assignee: str | None,
                     as_email: str | None, as_json: bool) -> None:  # fmt: skip
    """Change an action item's status or assignee (from its current version)."""

    def act(db: Database) -> None:
        person = acting_person(db, as_email)
        now = present.item_answer(queries.get_handoff_action_item(db, person, item_id=item_id))
        now = now["actionItem"]
        changes: dict[str, Any] = {}
        if status is not None:
            changes["status"] = status
        if assignee is not None:
            changes["assignee"] = None if assignee == "none" else assignee
        read = commands.update_handoff_action_item(
            db, person, item_id=item_id, expected_updated_at=now["updatedAt"], changes=changes
        )
        made = present.item_answer(read)["actionItem"]
        emit(as_json, made, lambda: f"{made['id']} [{made['status']}] {made['text']}")

    guarded(state_, as_json, act)


def register(cli: click.Group) -> None:
    cli.add_command(handoff_group)
