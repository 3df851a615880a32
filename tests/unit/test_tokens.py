from __future__ import annotations

from crewboard.domain.identity.tokens import (
    TOKEN_LENGTH,
    TOKEN_PREFIX,
    display_prefix,
    generate_token_secret,
    hash_token_secret,
    is_well_formed,
)


def test_generated_token_has_prefix_length_and_valid_checksum() -> None:
    secret = generate_token_secret()
    assert secret.startswith(TOKEN_PREFIX)
    assert len(secret) == TOKEN_LENGTH
    assert is_well_formed(secret)


def test_generated_tokens_differ() -> None:
    assert len({generate_token_secret() for _ in range(200)}) == 200


def test_one_changed_character_breaks_the_checksum() -> None:
    secret = generate_token_secret()
    position = len(TOKEN_PREFIX) + 5
    replacement = "A" if secret[position] != "A" else "B"
    altered = secret[:position] + replacement + secret[position + 1 :]
    assert not is_well_formed(altered)


def test_truncated_foreign_and_empty_tokens_are_not_well_formed() -> None:
    secret = generate_token_secret()
    assert not is_well_formed(secret[:-1])
    assert not is_well_formed("ghp_" + secret[3:])
    assert not is_well_formed("")
    assert not is_well_formed(secret[:-7] + "!" + secret[-6:])


def test_hash_is_stable_hex_and_never_the_secret() -> None:
    secret = generate_token_secret()
    digest = hash_token_secret(secret)
    assert digest == hash_token_secret(secret)
    assert len(digest) == 64
    assert secret not in digest


def test_display_prefix_is_too_short_to_use() -> None:
    secret = generate_token_secret()
    shown = display_prefix(secret)
    assert secret.startswith(shown)
    assert len(shown) <= len(TOKEN_PREFIX) + 6
