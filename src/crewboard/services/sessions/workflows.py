"""The workflows a session follows, shipped as data beside this module (`workflows/*.toml`).

A workflow is a mode, the files it usually produces, and the steps its prompt gives the
model; `protocol.txt` is the part every workflow shares (how a reply asks for answers and
proposes files). Adding a workflow is adding a TOML file: its id is what `workflowId` takes.

Optional keys: `reads_code` (the model reads the project's code through a connected
`crewboard reverse`), `aliases` (other ids `workflowId` takes for it, such as the names other
tools give the same workflow; a session stores the id), `next_number_in` (a folder whose
numbered feature folders, `NNN-name`, the workflow continues: the working context names the next
free number) and `context_folders` (folders of the project's spec files the working context
shows, such as the specs a change modifies).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from crewboard.domain.sessions import LANGUAGE_NAMES, Language, Mode
from crewboard.errors import ValidationFailed


@dataclass(frozen=True)
class Workflow:
    id: str
    mode: Mode
    default: bool
    name: str
    description: str
    produces: tuple[str, ...]
    steps: str
    reads_code: bool = False
    aliases: tuple[str, ...] = ()
    next_number_in: str | None = None
    context_folders: tuple[str, ...] = ()

    def view(self) -> dict[str, object]:
        return {"id": self.id, "mode": self.mode.value, "default": self.default,
                "name": self.name, "description": self.description,
                "produces": list(self.produces), "readsCode": self.reads_code,
                "aliases": list(self.aliases)}  # fmt: skip

    def system_prompt(self, language: Language) -> str:
        """The instructions the model gets before the conversation (and the context)."""
        protocol = _text("protocol.txt").format(language=LANGUAGE_NAMES[language])
        return f"{protocol}\n\n## This workflow: {self.name}\n{self.steps.strip()}\n"


def _text(name: str) -> str:
    return resources.files(__package__).joinpath("workflows", name).read_text(encoding="utf-8")


@cache
def workflows() -> dict[str, Workflow]:
    """Every shipped workflow by id, in id order."""
    found: dict[str, Workflow] = {}
    folder = resources.files(__package__).joinpath("workflows")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
        flow = Workflow(
            id=data["id"],
            mode=Mode(data["mode"]),
            default=bool(data.get("default", False)),
            name=data["name"],
            description=" ".join(data["description"].split()),
            produces=tuple(data.get("produces", ())),
            steps=data["steps"],
            reads_code=bool(data.get("reads_code", False)),
            aliases=tuple(data.get("aliases", ())),
            next_number_in=data.get("next_number_in"),
            context_folders=tuple(data.get("context_folders", ())),
        )
        found[flow.id] = flow
    return dict(sorted(found.items()))


@cache
def _by_alias() -> dict[str, Workflow]:
    return {alias: flow for flow in workflows().values() for alias in flow.aliases}


def find_workflow(workflow_id: str) -> Workflow | None:
    """The workflow an id or one of its aliases names."""
    return workflows().get(workflow_id) or _by_alias().get(workflow_id)


def default_workflow(mode: Mode) -> Workflow:
    return next(w for w in workflows().values() if w.mode is mode and w.default)


def check_workflow(workflow_id: str | None, mode: Mode) -> Workflow:
    """The workflow a session follows: the one named, or the mode's default.

    An alias names its workflow too; the session stores the workflow's own id.

    Raises:
        ValidationFailed: an unknown id, or one of the other mode; names the accepted ids and
            aliases of the mode.
    """
    if workflow_id is None:
        return default_workflow(mode)
    flow = find_workflow(workflow_id)
    fitting = sorted(
        name for w in workflows().values() if w.mode is mode for name in (w.id, *w.aliases)
    )
    if flow is None:
        raise ValidationFailed.field(
            "workflowId",
            f"{workflow_id!r} is not a workflow of mode {mode.value}.",
            accepted=fitting,
        )
    if flow.mode is not mode:
        raise ValidationFailed.field(
            "workflowId",
            f"{workflow_id!r} is a workflow of mode {flow.mode.value} and does not match mode "
            f"{mode.value}.",
            accepted=fitting,
        )
    return flow
