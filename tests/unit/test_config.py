from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from crewboard.config import load_settings


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("CREWBOARD_"):
            monkeypatch.delenv(name)


def test_defaults_put_an_sqlite_file_in_the_data_folder() -> None:
    settings = load_settings()
    assert settings.host == "127.0.0.1"
    assert settings.port == 8787
    assert settings.data_dir == Path(".crewboard")
    assert (
        settings.resolved_database_url == f"sqlite:///{Path('.crewboard/crewboard.db').resolve()}"
    )
    assert settings.public_url == "http://127.0.0.1:8787"


def test_environment_wins_over_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "crewboard.toml"
    config.write_text('port = 9000\nhost = "::"\ndata_dir = "/srv/crew"\n')
    monkeypatch.setenv("CREWBOARD_PORT", "9100")
    settings = load_settings(config)
    assert settings.port == 9100
    assert settings.host == "::"
    assert settings.data_dir == Path("/srv/crew")


def test_config_file_is_found_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('database_url = "postgresql+psycopg://u@db/crew"\n')
    monkeypatch.setenv("CREWBOARD_CONFIG_FILE", str(config))
    assert load_settings().resolved_database_url == "postgresql+psycopg://u@db/crew"


def test_allowed_hosts_and_origins_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CREWBOARD_ALLOWED_HOSTS", "crew.example.com, crew.internal")
    monkeypatch.setenv("CREWBOARD_ALLOWED_ORIGINS", "https://crew.example.com")
    monkeypatch.setenv("CREWBOARD_BASE_URL", "https://board.example.com/")
    settings = load_settings()
    assert {
        "crew.example.com",
        "crew.internal",
        "board.example.com",
        "localhost",
    } <= settings.accepted_hosts()
    assert "https://crew.example.com" in settings.accepted_origins()
    assert "https://board.example.com" in settings.accepted_origins()
    assert settings.public_url == "https://board.example.com"


def test_unknown_key_in_the_config_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("prot = 1\n")
    with pytest.raises(ValidationError, match="prot"):
        load_settings(config)


@pytest.mark.parametrize(
    ("name", "value"),
    [("CREWBOARD_PORT", "70000"), ("CREWBOARD_PORT", "http"), ("CREWBOARD_BASE_URL", "ftp://x")],
)
def test_bad_values_are_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as caught:
        load_settings()
    field = name.removeprefix("CREWBOARD_").lower()
    assert any(error["loc"] == (field,) for error in caught.value.errors())
