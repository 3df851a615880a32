"""The runner is the one place a turn's text is stored, and it scrubs it whatever adapter wrote
it: a provider whose error message carries the key (percent-encoded, repr-escaped, base64, a URL
with the base URL's password) or whose reply repeats it leaves no form of it in the turn, the
session, the event or the conversation, on both databases."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from crewboard.config import Settings
from crewboard.contract.sessions import present
from crewboard.domain.identity.records import User
from crewboard.domain.sessions import Mode
from crewboard.services.identity.users import person_actor
from crewboard.services.sessions import conversation, models, sessions
from crewboard.services.sessions.providers import ModelProvider, ProviderConfig
from crewboard.services.sessions.providers.memory import MemoryProvider
from crewboard.services.sessions.runner import SessionRunner
from crewboard.storage.database import Database
from tests.support.factories import make_project, make_user
from tests.support.secrets import every_form, leaks

pytestmark = pytest.mark.anyio

KEY = "sk-runner/k3y+0123456789"
PASSWORD = "base-url-pa55word"
KEY_ENV = "CREWBOARD_TEST_RUNNER_KEY"


@pytest.fixture
def owner(db: Database, monkeypatch: pytest.MonkeyPatch) -> User:
    user = make_user(db, "alice@example.com", is_owner=True)
    make_project(db, user, "CRW")
    monkeypatch.setenv(KEY_ENV, KEY)
    values = models.check_provider(
        provider_id="leaky", kind="openai", base_url=f"http://ci:{PASSWORD}@127.0.0.1:9/v1",
        key_env=KEY_ENV, key_file=None, timeout=5, max_retries=0,
    )  # fmt: skip
    models.do_put_provider(db, None, values)
    models.do_put_model(db, None, model_id="m", provider_id="leaky", model="m-1", is_default=True)
    return user


def echoing(config: ProviderConfig, script: MemoryProvider) -> ModelProvider:
    assert config.api_key == KEY  # the runner handed the adapter the real key
    return script


def stored(db: Database, owner: User, session_id: str) -> str:
    """Everything a reader can be shown of the session, as stored."""
    actor = person_actor(owner)
    page = present.screen_view(conversation.session_page(db, actor, project="CRW", ref=session_id))
    got = present.found_answer(
        sessions.get_session(db, actor, project="CRW", ref=session_id), "http://127.0.0.1"
    )
    with db.engine.connect() as conn:
        events = conn.exec_driver_sql("SELECT payload FROM events").all()
    return json.dumps([page, got, [str(row[0]) for row in events]], default=str)


async def run_one(db: Database, owner: User, tmp_path: Path, script: MemoryProvider) -> str:
    made = sessions.start_session(
        db, person_actor(owner), project="CRW", workspace_id=None, mode=Mode.GENERATE,
        prompt="Invoices as CSV.", answer=present.started_answer,
    )  # fmt: skip
    runner = SessionRunner(
        db, Settings(data_dir=tmp_path), providers=lambda config: echoing(config, script)
    )
    await runner.drain()
    return str(made.body["sessionId"])


async def test_a_provider_error_carrying_the_key_in_any_form_is_stored_without_it(
    db: Database, owner: User, tmp_path: Path
) -> None:
    basic = base64.b64encode(f"ci:{PASSWORD}".encode()).decode()
    script = MemoryProvider()
    script.fail(
        "refused",
        f"key {quote(KEY, safe='')} / {KEY.encode()!r} / Basic {basic} / "
        f"at http://ci:{PASSWORD}@127.0.0.1:9/v1?api_key={quote(KEY, safe='')}",
        401,
    )
    session_id = await run_one(db, owner, tmp_path, script)
    text = stored(db, owner, session_id)
    assert "provider_failed" in text
    assert not leaks(every_form(KEY), text)
    assert not leaks(every_form(PASSWORD, user="ci"), text)


async def test_a_reply_repeating_the_key_is_stored_without_it(
    db: Database, owner: User, tmp_path: Path
) -> None:
    script = MemoryProvider(f"Your key is {KEY}; encoded {quote(KEY, safe='')}. Example: "
                            "postgres://app:example@db/app")  # fmt: skip
    session_id = await run_one(db, owner, tmp_path, script)
    text = stored(db, owner, session_id)
    assert "Your key is" in text
    assert "postgres://app:example@db/app" in text  # a spec's example URL is the reply's own
    assert not leaks(every_form(KEY), text)
