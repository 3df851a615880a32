"""Spec session test helpers: a configured provider pointing at the loopback model server, and
model replies written the way the workflows teach the model to write them."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from crewboard.domain.sessions import Mode
from crewboard.services.sessions import models
from crewboard.services.sessions.workflows import default_workflow, workflows
from crewboard.storage.database import Database
from tests.support.model_server import Api, ModelServer


def configure_model(
    db: Database,
    server: ModelServer,
    api: Api = "openai",
    *,
    model_id: str = "test-model",
    stream: bool = True,
    timeout: float = 10.0,
    max_retries: int = 2,
    key_env: str | None = None,
    key_file: str | None = None,
    base_url: str | None = None,
) -> str:
    """A provider and a default model at the test's model server (or at `base_url`); the
    model's id."""
    values = models.check_provider(
        provider_id=f"loopback-{api}", kind=api, base_url=base_url or server.base_url(api),
        key_env=key_env, key_file=key_file, timeout=timeout, max_retries=max_retries,
    )  # fmt: skip
    models.do_put_provider(db, None, values, stream=stream)
    models.do_put_model(
        db, None, model_id=model_id, provider_id=values.id, model=f"{api}-test-1",
        is_default=True,
    )  # fmt: skip
    return model_id


def code_reading_workflow(monkeypatch: pytest.MonkeyPatch) -> str:
    """The id of a workflow whose sessions read code: a shipped one, or (while none ships) the
    generate default marked so for this test."""
    shipped = [w.id for w in workflows().values() if w.reads_code]
    if shipped:
        return shipped[0]
    flow = replace(default_workflow(Mode.GENERATE), id="test-reads-code-v1", default=False,
                   reads_code=True)  # fmt: skip
    monkeypatch.setitem(workflows(), flow.id, flow)
    return flow.id


def questions(*texts: str, prose: str = "A few questions first.") -> str:
    """A reply asking interview questions (single choice with two options each)."""
    items = [
        {"id": f"q{n}", "text": text, "kind": "single", "options": ["Yes", "No"]}
        for n, text in enumerate(texts, start=1)
    ]
    return f"{prose}\n\n<questions>{json.dumps({'questions': items})}</questions>"


def proposes(path: str, content: str, prose: str = "Here is a draft.") -> str:
    """A reply proposing one whole spec file."""
    return f'{prose}\n\n<spec-file path="{path}">\n{content}</spec-file>\n'


def last_user_message(body: dict[str, Any]) -> str:
    """The last message the person (or agent) sent, from a recorded provider request."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    if isinstance(content, list):  # Anthropic's content blocks
        return "".join(part.get("text", "") for part in content)
    return str(content)


def system_prompt(body: dict[str, Any]) -> str:
    """The instructions a recorded request carried (either API)."""
    if "system" in body:
        system = body["system"]
        return system if isinstance(system, str) else json.dumps(system)
    first = (body.get("messages") or [{}])[0]
    return str(first.get("content", "")) if first.get("role") == "system" else ""
