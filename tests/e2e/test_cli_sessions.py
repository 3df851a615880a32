"""`crewboard model …` in-process (click's runner) on each backend, from a fresh data folder: the
operator adds providers (a key read from a variable or a file) and their models, lists them
without ever showing a key, and removes them; each refusal exits 1 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import RunCli

KEY = "sk-test-never-printed-0123456789"
ADD = ("model", "provider", "add", "x", "--kind", "openai")


@pytest.fixture
def run(run: RunCli) -> RunCli:
    """The CLI on a database `crewboard init` has set up."""
    assert run("init").exit_code == 0
    return run


def test_providers_and_models_are_added_listed_and_removed(
    run: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREWBOARD_MODEL_KEY", KEY)
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    hosted = run("model", "provider", "add", "openai-main", "--kind", "openai",
                 "--key-env", "CREWBOARD_MODEL_KEY", "--json")  # fmt: skip
    assert hosted.exit_code == 0, hosted.output
    assert json.loads(hosted.output) | {"updatedAt": None} == {
        "id": "openai-main", "kind": "openai", "baseUrl": "https://api.openai.com/v1",
        "keyFrom": "env:CREWBOARD_MODEL_KEY", "timeoutSeconds": 120.0, "maxRetries": 2,
        "stream": True, "updatedAt": None,
    }  # fmt: skip
    local = run("model", "provider", "add", "claude", "--kind", "anthropic",
                "--base-url", "http://127.0.0.1:9/", "--key-file", str(key_file),
                "--timeout", "30", "--retries", "0", "--no-stream")  # fmt: skip
    assert local.exit_code == 0, local.output
    assert "claude  anthropic  http://127.0.0.1:9  key file:" in local.output
    made = run("model", "add", "gpt", "--provider", "openai-main", "--model", "gpt-4.1",
               "--label", "GPT", "--max-tokens", "8000", "--default", "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert json.loads(made.output) == {
        "id": "gpt", "providerId": "openai-main", "model": "gpt-4.1", "label": "GPT",
        "maxTokens": 8000, "isDefault": True,
    }  # fmt: skip
    assert run("model", "add", "sonnet", "--provider", "claude", "--model", "c-4").exit_code == 0
    providers = run("model", "provider", "list")
    assert "openai-main  openai  https://api.openai.com/v1  key env:CREWBOARD_MODEL_KEY" in (
        providers.output
    )
    assert f"key file:{key_file}" in providers.output
    assert "no stream" in providers.output
    listed = json.loads(run("model", "list", "--json").output)
    assert [(m["id"], m["isDefault"]) for m in listed] == [("gpt", True), ("sonnet", False)]
    assert "(default)" in run("model", "list").output
    assert run("model", "remove", "gpt").output.strip() == "removed model gpt"
    gone = run("model", "provider", "remove", "claude", "--json")
    assert json.loads(gone.output) == {"removed": "claude"}
    assert run("model", "list").output.strip() == "no models"  # a provider takes its models
    left = json.loads(run("model", "provider", "list", "--json").output)
    assert [p["id"] for p in left] == ["openai-main"]
    every = "".join(
        run(*command).output
        for command in (
            ("model", "provider", "list"), ("model", "provider", "list", "--json"),
            ("model", "list"), ("model", "list", "--json"),
        )
    )  # fmt: skip
    assert KEY not in every + hosted.output + local.output + made.output


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        (("model", "provider", "add", "x", "--kind", "gemini"), "kind"),
        (("model", "provider", "add", "Bad Id", "--kind", "openai"), "id"),
        ((*ADD, "--base-url", "ftp://h"), "baseUrl"),
        ((*ADD, "--key-env", "A", "--key-file", "/k"), "keyEnv"),
        ((*ADD, "--key-env", "NOT-A-NAME"), "keyEnv"),
        ((*ADD, "--key-file", "relative.key"), "keyFile"),
        ((*ADD, "--timeout", "0"), "timeoutSeconds"),
        ((*ADD, "--retries", "11"), "maxRetries"),
        (("model", "add", "m", "--provider", "nope", "--model", "gpt"), "providerId"),
        (
            ("model", "add", "m", "--provider", "p", "--model", "gpt", "--max-tokens", "10"),
            "maxTokens",
        ),
        (("model", "add", "M!", "--provider", "p", "--model", "gpt"), "id"),
        (("model", "add", "m", "--provider", "p", "--model", " "), "model"),
    ],
    ids=lambda value: "-".join(value[-2:]) if isinstance(value, tuple) else value,
)
def test_a_refusal_exits_1_naming_the_field_and_changes_nothing(
    run: RunCli, arguments: tuple[str, ...], field: str
) -> None:
    assert run("model", "provider", "add", "p", "--kind", "openai").exit_code == 0
    refused = run(*arguments)
    assert refused.exit_code == 1, refused.output
    assert f"{field}:" in refused.output
    assert "[VALIDATION]" in refused.output
    as_json = run(*arguments, "--json")
    assert json.loads(as_json.output)["error"]["details"]["field"] == field
    assert [p["id"] for p in json.loads(run("model", "provider", "list", "--json").output)] == ["p"]
    assert run("model", "list", "--json").output.strip() == "[]"


def test_removing_what_is_not_configured_exits_1(run: RunCli) -> None:
    model = run("model", "remove", "ghost")
    provider = run("model", "provider", "remove", "ghost", "--json")
    assert model.exit_code == provider.exit_code == 1
    assert "ghost" in model.output
    assert "[NOT_FOUND]" in model.output
    assert json.loads(provider.output)["error"]["code"] == "NOT_FOUND"


def test_lists_start_empty(run: RunCli) -> None:
    assert run("model", "provider", "list").output.strip() == "no providers"
    assert json.loads(run("model", "list", "--json").output) == []


def test_a_password_in_a_base_url_is_printed_nowhere(run: RunCli) -> None:
    added = run("model", "provider", "add", "proxy", "--kind", "openai", "--base-url",
                "https://ci-user:pa55w0rd-not-printed@gw.example/v1", "--json")  # fmt: skip
    assert added.exit_code == 0, added.output
    every = added.output + "".join(
        run(*command).output
        for command in (("model", "provider", "list"), ("model", "provider", "list", "--json"))
    )
    assert "pa55w0rd-not-printed" not in every
    assert "https://ci-user:" in every
    assert "@gw.example/v1" in every
