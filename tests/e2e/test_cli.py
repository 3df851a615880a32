"""The operator CLI in-process (click's runner) on each backend."""

from __future__ import annotations

import json

from crewboard.config import load_settings
from crewboard.contract.projects import present
from crewboard.services.identity import users
from crewboard.storage.database import Database


def test_init_twice_creates_nothing_twice_and_prints_secrets_once(run) -> None:  # type: ignore[no-untyped-def]
    first = run("init")
    assert first.exit_code == 0, first.output
    assert "cb_" in first.output
    assert "password:" in first.output
    assert "claude mcp add --transport http crewboard" in first.output
    assert '"mcpServers"' in first.output
    assert '"servers"' in first.output
    assert "[mcp_servers.crewboard]" in first.output  # Codex CLI
    assert '"httpUrl"' in first.output  # Gemini CLI
    assert "Claude Desktop (claude_desktop_config.json):" in first.output
    assert "Any stdio client:" in first.output
    second = run("init")
    assert second.exit_code == 0
    assert "cb_" not in second.output
    assert "password" not in second.output
    assert len(json.loads(run("user", "list", "--json").output)) == 1
    assert len(json.loads(run("project", "list", "--json").output)["projects"]) == 1
    assert len(json.loads(run("token", "list", "--json").output)) == 1


def test_commands_refuse_an_unmigrated_database(run) -> None:  # type: ignore[no-untyped-def]
    result = run("user", "list")
    assert result.exit_code == 1
    assert "crewboard migrate" in result.output


def test_migrate_reports_and_is_idempotent(run) -> None:  # type: ignore[no-untyped-def]
    first = json.loads(run("migrate", "--json").output)
    assert first["from"] is None
    assert first["changed"] is True
    again = json.loads(run("migrate", "--json").output)
    assert again["changed"] is False


def test_user_token_and_project_commands_for_scripts(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    made = run(
        "user", "create", "ada@example.com", "--password-stdin", "--json", stdin="a good password\n"
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["email"] == "ada@example.com"

    project = json.loads(
        run("project", "create", "--key", "CRW", "--name", "Crew", "--json").output
    )["project"]
    assert project["key"] == "CRW"
    granted = run("project", "add-member", "CRW", "ada@example.com", "--role", "write", "--json")
    assert json.loads(granted.output)["role"] == "write"

    created = run(
        "token",
        "create",
        "--user",
        "ada@example.com",
        "--scopes",
        "read,tasks.manage",
        "--kind",
        "agent",
        "--project",
        "CRW",
        "--role",
        "write",
        "--toolsets",
        "board,review",
        "--json",
    )
    assert created.exit_code == 0, created.output
    token = json.loads(created.output)
    assert token["token"].startswith("cb_")
    assert token["kind"] == "agent"
    assert token["scopes"] == ["read", "tasks.manage"]
    assert token["toolsets"] == ["board", "review"]
    assert token["projectId"] == project["id"]

    listed = json.loads(run("token", "list", "--user", "ada@example.com", "--json").output)
    assert [t["id"] for t in listed] == [token["id"]]
    assert "token" not in listed[0]
    assert token["token"] not in run("token", "list").output

    revoked = json.loads(run("token", "revoke", token["id"], "--json").output)
    assert revoked["revokedAt"] is not None
    assert json.loads(run("token", "list", "--user", "ada@example.com", "--json").output) == []

    listed = json.loads(run("project", "list", "--as", "ada@example.com", "--json").output)
    assert [(p["key"], p["viewerRole"]) for p in listed["projects"]] == [("CRW", "write")]
    removed = json.loads(run("project", "remove-member", "CRW", "ada@example.com", "--json").output)
    assert removed["removed"] is True
    assert (
        json.loads(run("project", "list", "--as", "ada@example.com", "--json").output)["projects"]
        == []
    )
    again = run("project", "remove-member", "CRW", "ada@example.com", "--json")
    assert again.exit_code == 1
    assert json.loads(again.output)["error"]["code"] == "NOT_FOUND"


def test_token_create_says_what_a_token_naming_no_toolsets_is_shown(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    helped = run("token", "create", "--help")
    assert helped.exit_code == 0
    assert "the default set, the board and memory" in " ".join(helped.output.split())
    plain = run("token", "create", "--user", "owner@crewboard.local", "--scopes", "read")
    assert plain.exit_code == 0, plain.output
    assert "toolsets: none named, so the default set, the board and memory toolsets" in (
        plain.output
    )
    named = run(
        "token", "create", "--user", "owner@crewboard.local", "--scopes", "read",
        "--toolsets", "board,repos",
    )  # fmt: skip
    assert "toolsets: board, repos" in named.output


def test_errors_exit_1_with_code_and_json_for_scripts(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    result = run(
        "token", "create", "--user", "owner@crewboard.local", "--scopes", "read,fly", "--json"
    )
    assert result.exit_code == 1
    error = json.loads(result.output)["error"]
    assert error["code"] == "VALIDATION"
    assert error["details"]["field"] == "scopes"
    assert "tasks.manage" in error["details"]["accepted"]

    plain = run("project", "create", "--key", "DEMO", "--name", "Again")
    assert plain.exit_code == 1
    assert "ALREADY_EXISTS" in plain.output


def test_set_password_from_stdin(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    result = run(
        "user", "set-password", "owner@crewboard.local", "--password-stdin", stdin="new secret pw\n"
    )
    assert result.exit_code == 0, result.output
    short = run(
        "user", "set-password", "owner@crewboard.local", "--password-stdin", stdin="short\n"
    )
    assert short.exit_code == 1
    assert "password" in short.output


def test_state_versions_and_restore_from_the_cli(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    assert json.loads(run("state", "show", "DEMO", "--json").output)["revision"] == 0
    db = Database(load_settings().resolved_database_url)
    try:
        owner = users.person_actor(users.get_user_by_email(db, "owner@crewboard.local"))
        for revision, text in enumerate(["one", "two"]):
            present.update_project_state(
                db,
                owner,
                project="DEMO",
                workspace_id=None,
                content=text,
                expected_revision=revision,
            )
    finally:
        db.dispose()
    versions = json.loads(run("state", "versions", "DEMO", "--json").output)
    assert [v["revision"] for v in versions["versions"]] == [2, 1]
    restored = json.loads(run("state", "restore", "DEMO", "1", "--json").output)
    assert (restored["revision"], restored["content"]) == (3, "one")
    missing = run("state", "restore", "DEMO", "9")
    assert missing.exit_code == 1
    assert "NOT_FOUND" in missing.output


def test_team_roles_from_the_cli(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    added = run(
        "team",
        "add-role",
        "DEMO",
        "--name",
        "Backend dev",
        "--model",
        "claude",
        "--effort",
        "high",
        "--json",
    )
    assert added.exit_code == 0, added.output
    (team,) = json.loads(run("team", "list", "DEMO", "--json").output)["teams"]
    assert [(r["name"], r["kind"], r["effort"]) for r in team["roles"]] == [
        ("Backend dev", "ai", "high")
    ]
    assert team["people"][0]["you"] is True


def test_whole_number_options_refuse_values_past_what_a_column_holds(run) -> None:  # type: ignore[no-untyped-def]
    run("init")
    for args in (
        ("memory", "list", "DEMO", "--limit", "0"),
        ("memory", "list", "DEMO", "--offset", str(2**31)),
        ("state", "restore", "DEMO", str(2**31)),
        ("inbox", "list", "--limit", "201"),
        ("serve", "--port", "70000"),
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "is not in the range" in result.output
