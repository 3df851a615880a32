"""Telling people about handoffs: the recipients of a new handoff (when the writer asks), and
the person an action item is given to (when the project allows)."""

from __future__ import annotations

from crewboard.domain.handoffs import BODY_LABELS, ActionItem, Handoff, Told
from crewboard.domain.identity.records import Actor
from crewboard.domain.notifications import MAX_EMAIL_TEXT
from crewboard.domain.projects import ProjectAccess
from crewboard.services.notifications.notify import notify
from crewboard.services.views import actor_name
from crewboard.storage.uow import UnitOfWork


def tell_assignee(uow: UnitOfWork, actor: Actor, item: ActionItem) -> None:
    """A person given an action item hears of it (in the app, and by email when their own
    settings say so) unless the project turned that off; once per item and assignment; giving
    it to yourself tells nobody."""
    person = item.assignee_user_id
    if person is None or person == actor.user_id:
        return
    if not uow.projects.handoff_settings(item.project_id).notify_assignees:
        return  # the project's admins turned it off
    key = uow.projects.get(item.project_id)
    where = f"/p/{key.key if key else item.project_id}/handoffs?date={item.day.isoformat()}"
    notify(
        uow, recipients=[person], kind="handoff_action_item.assigned",
        project_id=item.project_id,
        title=f"{actor_name(uow, actor)} gave you an action item", body=item.text[:500],
        link=f"{where}#{item.handoff_id}", source=f"handoff_item:{item.id}:{item.updated_at.isoformat()}",
        in_app=True, email=True,
    )  # fmt: skip


def tell_recipients(
    uow: UnitOfWork, actor: Actor, item: Handoff, access: ProjectAccess, *, in_app: bool,
    email: bool,
) -> Told:  # fmt: skip
    """Notify the recipients of a new handoff, as the call and their settings ask."""
    if not (in_app or email) or not item.recipient_user_ids:
        why = "nobody was notified: " + (
            "the handoff names no recipients." if (in_app or email)
            else "send sendNotification or sendEmail to tell the recipients."
        )  # fmt: skip
        return Told(0, 0, note=why)
    key = access.project.key
    who = actor_name(uow, actor)
    title = f"{who} handed over {key} for {item.day.isoformat()}"
    sections = [(label, getattr(item, name)) for name, label in BODY_LABELS if getattr(item, name)]
    text = "\n\n".join(f"{label}:\n{value}" for label, value in sections) or title
    outcome = notify(
        uow, recipients=item.recipient_user_ids, kind="handoff.created",
        project_id=item.project_id, title=title, body=(item.next_steps or item.completed)[:500],
        link=f"/p/{key}/handoffs?date={item.day.isoformat()}#{item.id}",
        source=f"handoff:{item.id}", in_app=in_app, email=email,
        email_subject=f"[{key}] {title}", email_text=text[:MAX_EMAIL_TEXT],
    )  # fmt: skip
    return Told(outcome.in_app, outcome.emails_queued, outcome.email_not_sent)
