"""What a session tells the people and agents who read it, beside its conversation: its
notices (a model that takes no tool calls, for one) and, for a session whose workflow reads
code, that no `crewboard reverse` is connected for the person who started it.

start_spec_session's and get_spec_session's answers carry these as `warnings`, and the session
page shows them at its top, with what the model read of the code turn by turn (`model_reads`).
"""

from __future__ import annotations

from crewboard.domain.identity.naming import name_parts
from crewboard.domain.sessions import ModelRead, Session
from crewboard.services.sessions.code import code_reads, live_bridge
from crewboard.services.sessions.workflows import workflows
from crewboard.storage.sessions.repository import SessionRepository
from crewboard.storage.uow import UnitOfWork

NO_TOOLS = "no_tools"


def no_tools_notice(model: str) -> dict[str, str]:
    """The notice of a session whose model answered that it takes no tools."""
    return {
        "code": NO_TOOLS,
        "message": f"The model {model} does not take tool calls: this session cannot read the "
        "code and writes from the conversation only.",
    }


def bridge_command(project_key: str) -> str:
    return f"crewboard reverse --project {project_key} <folder>"


def no_bridge_warning(session: Session, project_key: str) -> str:
    return (
        f"No `crewboard reverse` is connected for {_person(session)} in project "
        f"{project_key}: the session waits for one to read the code. Run "
        f"`{bridge_command(project_key)}` on the machine with the code."
    )


def _person(session: Session) -> str:
    """The person whose bridge the session waits for, by name: the bridge is theirs, whichever
    of their tokens or agents started the session."""
    parts = name_parts(session.created_by)
    return parts.for_person or parts.name


def creator_id(session: Session) -> str | None:
    """The user whose bridge the session's code calls go to: the one who started it."""
    found = session.created_by.get("userId")
    return found if isinstance(found, str) else None


def reads_code(session: Session) -> bool:
    """Whether the session's turns read code: its workflow does, and its model takes tools."""
    flow = workflows().get(session.workflow_id)
    if flow is None or not flow.reads_code:
        return False
    return not any(n.get("code") == NO_TOOLS for n in session.notices)


def waits_for_bridge(uow: UnitOfWork, session: Session) -> bool:
    """Whether the session reads code and no bridge of the person who started it is live."""
    user_id = creator_id(session)
    return reads_code(session) and (
        user_id is None or live_bridge(uow, project_id=session.project_id, user_id=user_id) is None
    )


def session_warnings(uow: UnitOfWork, session: Session) -> list[str]:
    """The session's notices, then the missing bridge of a session that reads code."""
    found = [n["message"] for n in session.notices if n.get("message")]
    if waits_for_bridge(uow, session):
        project = uow.projects.get(session.project_id)
        found.append(no_bridge_warning(session, project.key if project else session.project_id))
    return found


def model_reads(uow: UnitOfWork, session: Session) -> tuple[ModelRead, ...]:
    """Every code call the session's turns made, oldest first, with its turn's number."""
    seqs = {turn.id: turn.seq for turn in SessionRepository(uow.conn).turns(session.id)}
    return tuple(
        ModelRead(
            turn_id=read.turn_id,
            turn_seq=seqs.get(read.turn_id, 0),
            seq=read.seq,
            tool=read.tool,
            arguments=dict(read.arguments),
            status=read.status,
            summary=dict(read.summary),
        )
        for read in sorted(
            code_reads(uow, session.id), key=lambda r: (seqs.get(r.turn_id, 0), r.seq)
        )
    )
