"""The wire of a code bridge (`crewboard reverse`): the bodies it sends (camelCase, checked as
strictly as MCP checks arguments) and the answers it reads."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from crewboard.contract import args as a
from crewboard.domain import code_tools
from crewboard.services.sessions.bridges import (
    MAX_ANSWERS,
    MAX_CLIENT,
    MAX_FOLDER,
    WAIT_DEFAULT,
    WAIT_MOST,
    BridgeAnswer,
    CallOut,
    Registered,
)
from crewboard.services.views import iso


class RegisterBridge(a.Args):
    """A bridge for the project the path names, answering from one folder."""

    folder: str = Field(
        min_length=1,
        max_length=MAX_FOLDER,
        description="The name of the folder the bridge answers from (shown to the person).",
    )
    client: str | None = Field(
        default=None, max_length=MAX_CLIENT, description="The client and its version."
    )


class BridgeError(a.Args):
    code: str = Field(
        min_length=1,
        max_length=40,
        description="One of " + ", ".join(code_tools.ERROR_CODES) + ".",
    )
    message: str = Field(max_length=code_tools.MAX_ERROR_MESSAGE)


class AnswerArgs(a.Args):
    """The answer to one call: its result, or an error (one of the two)."""

    call_id: str = Field(min_length=1, max_length=64, description="The call's id (bcl_…).")
    result: dict[str, Any] | None = Field(default=None, description="What the tool found.")
    error: BridgeError | None = None

    def answer(self) -> BridgeAnswer:
        error = None if self.error is None else self.error.model_dump()
        return BridgeAnswer(self.call_id, result=self.result, error=error)


class ExchangeBridge(a.Args):
    """Answers to the calls the bridge took; then new calls, waiting up to waitSeconds."""

    answers: list[AnswerArgs] = Field(
        default_factory=list,
        max_length=MAX_ANSWERS,
        description="Each at most 256 KiB of JSON.",
    )
    wait_seconds: int = Field(
        default=WAIT_DEFAULT,
        ge=0,
        le=WAIT_MOST,
        description="Seconds to wait for a call when none waits now.",
    )


def registered_answer(made: Registered) -> dict[str, Any]:
    bridge = made.bridge
    return {
        "bridge": {
            "id": bridge.id,
            "projectId": bridge.project_id,
            "projectKey": made.project_key,
            "folder": bridge.folder,
            "connectedAt": iso(bridge.connected_at),
        },
        "waitSeconds": made.wait_seconds,
    }


def calls_answer(calls: list[CallOut]) -> dict[str, Any]:
    return {
        "calls": [{"callId": c.call_id, "tool": c.tool, "arguments": c.arguments} for c in calls]
    }
