"""The workflows a session follows, shipped as data beside this module (`workflows/*.toml`).

A workflow is a mode, the files it usually produces, and the steps its prompt gives the
model; `protocol.txt` is the part every workflow shares (how a reply asks for answers and
proposes files). Adding a workflow is adding a TOML file: its id is what `workflowId` takes.
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

    def view(self) -> dict[str, object]:
        return {"id": self.id, "mode": self.mode.value, "default": self.default,
                "name": self.name, "description": self.description,
                "produces": list(self.produces)}  # fmt: skip

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
        )
        found[flow.id] = flow
    return dict(sorted(found.items()))


def default_workflow(mode: Mode) -> Workflow:
    return next(w for w in workflows().values() if w.mode is mode and w.default)


def check_workflow(workflow_id: str | None, mode: Mode) -> Workflow:
    """The workflow a session follows: the one named, or the mode's default.

    Raises:
        ValidationFailed: an unknown id, or one of the other mode; names the accepted ids.
    """
    if workflow_id is None:
        return default_workflow(mode)
    flow = workflows().get(workflow_id)
    fitting = sorted(w.id for w in workflows().values() if w.mode is mode)
    if flow is None:
        raise ValidationFailed.field(
            "workflowId",
            f"{workflow_id!r} is not a workflow of mode {mode.value}.",
            accepted=fitting,
        )
    if flow.mode is not mode:
        raise ValidationFailed.field(
            "workflowId",
            f"{workflow_id!r} is a {flow.mode.value} workflow and does not match mode "
            f"{mode.value}.",
            accepted=fitting,
        )
    return flow
