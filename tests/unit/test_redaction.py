"""The one scrubber of provider secrets (`crewboard.domain.redaction`): random keys, each
written in every encoding the server or a provider echoing it can produce, none of which may
survive; credentials in URLs; and ordinary text left as it was."""

from __future__ import annotations

import time
from urllib.parse import quote

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from crewboard.domain.redaction import (
    MASK,
    Redactor,
    display_url,
    url_secrets,
    without_url_credentials,
)
from tests.support.secrets import every_form

# Visible characters a key may hold, with the ones every encoding treats specially.
KEY_CHARS = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    + list("-_./+=:@%&?#'\"\\<>~!$*()[]{}|^`,;")
    + ["é", "ß", "€", "日", "😀"]
)
KEYS = st.text(KEY_CHARS, min_size=8, max_size=48)
AROUND = st.text(st.sampled_from(list("abcXYZ019 .,:;-\n")), max_size=20)


def assert_scrubbed(redactor: Redactor, forms: list[str], before: str, after: str) -> None:
    for form in forms:
        out = redactor.text(f"{before}{form}{after}")
        assert MASK in out
        leaked = [other for other in forms if other in out]
        assert not leaked, (form, out)


@settings(max_examples=100, deadline=None)
@given(key=KEYS, before=AROUND, after=AROUND)
def test_no_encoding_of_a_random_key_survives_the_scrubber(
    key: str, before: str, after: str
) -> None:
    assume(key.strip() == key and key not in MASK)
    assert_scrubbed(Redactor([key]), every_form(key), before, after)


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(KEYS, min_size=2, max_size=3), before=AROUND, after=AROUND)
def test_no_line_of_a_key_file_of_several_lines_survives_in_any_encoding(
    lines: list[str], before: str, after: str
) -> None:
    assume(all(line.strip() == line for line in lines))
    key = "\n".join(lines)
    redactor = Redactor([key])
    forms = every_form(key)
    assert_scrubbed(redactor, forms, before, after)
    for line in lines:  # one line echoed alone, in any encoding
        assert_scrubbed(redactor, every_form(line), before, after)


@settings(max_examples=50, deadline=None)
@given(
    user=st.text(st.sampled_from("abcdefgh-_.0123"), min_size=1, max_size=12),
    password=KEYS,
    before=AROUND,
)
def test_a_password_in_a_base_url_is_found_raw_encoded_and_in_basic_authentication(
    user: str, password: str, before: str
) -> None:
    assume(password.strip() == password and password not in MASK)
    url = f"https://{quote(user, safe='')}:{quote(password, safe='')}@models.example/v1"
    redactor = Redactor(url_secrets(url))
    assert_scrubbed(redactor, every_form(password, user=user), before, " (end)")
    shown = redactor.text(f"could not reach {url}: refused")
    assert quote(password, safe="") not in shown
    assert "models.example/v1" in shown


def test_credentials_in_any_url_are_replaced_and_the_rest_kept() -> None:
    text = (
        "see https://bob:hunter2hunter@proxy.example/v1 and http://ghp_tokenvalue@git.example/x "
        "and https://h.example/c?model=m&api_key=AAA&access_token=BBB&X-Amz-Signature=CCC"
        "&apikey=DDD&client_secret=EEE&password=FFF&page=2 and "
        '{"url": "https:\\/\\/u:JSONPASS@h.example\\/v1?token=GGG"}'
    )
    out = without_url_credentials(text)
    for secret in ("hunter2hunter", "ghp_tokenvalue", "AAA", "BBB", "CCC", "DDD", "EEE", "FFF",
                   "JSONPASS", "GGG"):  # fmt: skip
        assert secret not in out
    for kept in ("https://bob:", "proxy.example/v1", "git.example/x", "model=m", "page=2"):
        assert kept in out


def test_ordinary_text_and_urls_without_credentials_are_left_as_they_were() -> None:
    text = (
        "The model said: see https://example.com/docs?page=2#top, http://127.0.0.1:11434/v1 "
        "and mail ada@example.com; 10:30 at the desk."
    )
    assert Redactor(["sk-not-in-this-text-0123"]).text(text) == text


def test_a_reply_loses_the_key_but_keeps_example_urls_with_passwords() -> None:
    redactor = Redactor(["sk-reply-key-0123456789"])
    reply = "Connect with postgres://app:example@db/app; the key sk-reply-key-0123456789 leaked."
    out = redactor.secrets_in(reply)
    assert "sk-reply-key-0123456789" not in out
    assert "postgres://app:example@db/app" in out


def test_a_base_url_is_shown_without_its_password_or_token() -> None:
    assert display_url("https://ada:s3cr3t-pass@h.example/v1") == f"https://ada:{MASK}@h.example/v1"
    assert display_url("https://tok-abcdef@h.example/v1") == f"https://{MASK}@h.example/v1"
    assert display_url("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1"


def test_a_secret_too_short_to_be_one_is_not_looked_for() -> None:
    assert Redactor(["abc", None, ""]).text("abc abc") == "abc abc"


def test_texts_made_to_backtrack_are_scrubbed_promptly() -> None:
    redactor = Redactor(['sk-Ab/c+d=e"g\\h-0123456789', "https://ci:pa55word@gw.example/v1"])
    hostile = [
        "\\" * 50_000, "%25" * 20_000, "http://" + "a" * 50_000, "?" + "a" * 50_000,
        "http://" + "a:" * 25_000, "&#" + "0" * 50_000, "http://x:" * 6_000,
    ]  # fmt: skip
    for text in hostile:
        started = time.perf_counter()
        redactor.text(text)
        assert time.perf_counter() - started < 2.0, text[:20]
