"""Who did something, in words: the one naming rule every page, notification, email and message
uses for an author stamp (what records keep of who wrote them).

- a person signed in to the web: their name ("Owner");
- a person through their own token: their name and the token ("Owner via laptop");
- an agent: its seat, else its token, and whose agent it is ("night agent (for Owner)");
- Crewboard itself, an acceptance rule, an integration ("GitHub"): said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# How an integration acting for a person is named (the person who set it up stays in the stamp).
INTEGRATIONS = {"github": "GitHub"}
_NOT_PEOPLE = {"system": "Crewboard", "rule": "an acceptance rule"}


@dataclass(frozen=True)
class Named:
    """The parts of a name, for pages that set them apart (a badge for the token, muted "for")."""

    name: str
    via: str | None = None  # the person's own token they used
    for_person: str | None = None  # whose agent it is
    agent: bool = False
    human_seat: bool = False  # an agent token acting as a human seat

    @property
    def text(self) -> str:
        if self.via:
            return f"{self.name} via {self.via}"
        if self.for_person:
            return f"{self.name} (for {self.for_person})"
        return self.name


def name_parts(stamp: Mapping[str, Any] | None, people: Mapping[str, str] | None = None) -> Named:
    """The parts of who a stamp says did it; `people` names users the stamp names only by id."""
    if not stamp:
        return Named("someone")
    kind = stamp.get("kind")
    if kind == "integration":
        return Named(INTEGRATIONS.get(str(stamp.get("integration")), "an integration"))
    if kind in _NOT_PEOPLE:
        return Named(_NOT_PEOPLE[str(kind)])
    user_id = stamp.get("userId")
    person = str(
        stamp.get("displayName") or (people or {}).get(str(user_id)) or user_id or "someone"
    )
    token = stamp.get("tokenName")
    if kind == "agent_token":
        shown = str(stamp.get("roleName") or token or person)
        human = stamp.get("roleKind") == "human"
        return Named(shown, for_person=None if shown == person else person, agent=True,
                     human_seat=human)  # fmt: skip
    if kind == "personal_token":
        return Named(person, via=str(token or "a token"))
    return Named(person)


def name_of(stamp: Mapping[str, Any] | None, people: Mapping[str, str] | None = None) -> str:
    """Who a stamp says did it, as one line of text ("Owner via laptop", "night agent (for
    Owner)")."""
    return name_parts(stamp, people).text
