"""One error shape per door, for every error in the tree."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from crewboard.api.errors import error_response
from crewboard.cli.common import run_guarded
from crewboard.errors import ERROR_TYPES, CrewboardError, ErrorCode


def test_every_error_code_has_a_class_and_every_class_a_distinct_code() -> None:
    assert {cls.code for cls in ERROR_TYPES} == set(ErrorCode)


@pytest.mark.parametrize("error_type", ERROR_TYPES)
def test_rest_error_body_and_status(error_type: type[CrewboardError]) -> None:
    error = error_type("Something went wrong; do this instead.", {"field": "x"})
    response = error_response(error)
    assert response.status_code == error_type.http_status
    body = json.loads(bytes(response.body))
    assert body == {
        "error": {
            "code": str(error_type.code),
            "message": "Something went wrong; do this instead.",
            "details": {"field": "x"},
        }
    }
    if error_type.code is ErrorCode.UNAUTHENTICATED:
        assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("error_type", ERROR_TYPES)
@pytest.mark.parametrize("as_json", [True, False])
def test_cli_error_goes_to_stderr_with_exit_status_1(
    error_type: type[CrewboardError], as_json: bool
) -> None:
    @click.command()
    def command() -> None:
        def fail() -> None:
            raise error_type("Refused.", {"k": 1})

        run_guarded(fail, as_json)

    result = CliRunner().invoke(command)
    assert result.exit_code == 1
    assert result.stdout == ""
    if as_json:
        assert json.loads(result.stderr)["error"]["code"] == str(error_type.code)
    else:
        assert str(error_type.code) in result.stderr
