from __future__ import annotations

import pytest

from crewboard.domain.ids import new_id
from crewboard.domain.projects import check_collections, check_project_key
from crewboard.domain.validation import check_email, check_idempotency_key, check_text
from crewboard.errors import ErrorCode, LimitExceeded, ValidationFailed


def test_ids_carry_their_prefix_and_sort_by_creation() -> None:
    ids = [new_id("prj") for _ in range(50)]
    assert all(i.startswith("prj_") and len(i) == 26 for i in ids)
    assert len(set(ids)) == 50
    assert ids[0][:13] <= ids[-1][:13]


@pytest.mark.parametrize("key", ["CRW", "ab", "A1", "ABCDEFGHIJ"])
def test_project_keys_accept_letters_and_digits(key: str) -> None:
    assert check_project_key(key) == key.upper()


@pytest.mark.parametrize("key", ["C", "1AB", "CR-W", "ABCDEFGHIJK", ""])
def test_bad_project_keys_are_refused_naming_the_field(key: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        check_project_key(key)
    assert caught.value.details["field"] == "key"


def test_text_over_its_limit_is_a_limit_error_with_the_limit() -> None:
    assert check_text("name", "x" * 120, max_length=120) == "x" * 120
    with pytest.raises(LimitExceeded) as caught:
        check_text("name", "x" * 121, max_length=120)
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    assert caught.value.details == {"field": "name", "limit": 120, "actual": 121}


def test_required_text_refuses_blank() -> None:
    with pytest.raises(ValidationFailed):
        check_text("name", "   ", max_length=10, required=True)


def test_idempotency_keys_up_to_128_characters() -> None:
    assert check_idempotency_key("k" * 128) == "k" * 128
    assert check_idempotency_key(None) is None
    with pytest.raises(LimitExceeded):
        check_idempotency_key("k" * 129)
    with pytest.raises(ValidationFailed):
        check_idempotency_key("")


def test_emails_are_lowered_and_checked() -> None:
    assert check_email(" Ada@Example.COM ") == "ada@example.com"
    with pytest.raises(ValidationFailed):
        check_email("ada.example.com")


def test_collections_refuse_repeats_blank_and_too_many() -> None:
    assert check_collections(["Research", "Product"]) == ("Research", "Product")
    with pytest.raises(ValidationFailed):
        check_collections(["Research", "research"])
    with pytest.raises(ValidationFailed):
        check_collections([" "])
    with pytest.raises(LimitExceeded):
        check_collections([f"c{i}" for i in range(51)])
