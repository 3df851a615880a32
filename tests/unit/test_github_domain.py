"""GitHub deliveries, pure rules: the signature as GitHub makes it, task keys in branch names and
texts, repository URLs compared loosely, check conclusions as test states."""

from __future__ import annotations

from crewboard.domain.github import (
    read_delivery,
    repo_address,
    report_tests,
    sign,
    signature_ok,
    task_numbers,
)


def test_signature_is_hmac_sha256_hex_and_checked_whole() -> None:
    body = b'{"zen": "Keep it logically awesome."}'
    # GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )
    good = sign("s3cret", body)
    assert signature_ok("s3cret", body, good)
    assert not signature_ok("s3cret", body, None)
    assert not signature_ok("s3cret", body, good[:-1])
    assert not signature_ok("s3cret", body, good.removeprefix("sha256="))
    assert not signature_ok("other", body, good)


def test_task_keys_are_word_bounded_any_case_and_of_this_project_only() -> None:
    texts = ["feature/demo-12-login", "Fixes DEMO-3 and DEMO-12", "XDEMO-4 OTHER-5 DEMO-77x DEMO-8"]
    assert task_numbers("DEMO", texts) == [12, 3, 8]


def test_repository_urls_compare_without_case_git_suffix_or_slash() -> None:
    assert repo_address("https://GitHub.com/Octo/App.git/") == repo_address(
        "https://github.com/octo/app"
    )


def test_check_conclusions_become_test_states() -> None:
    assert [report_tests(c) for c in ("success", "failure", "timed_out", "cancelled", None, "neutral")] == [
        "passed", "failed", "failed", "failed", "running", "none",
    ]  # fmt: skip


def test_tag_pushes_and_branch_deletions_change_nothing() -> None:
    assert read_delivery("push", {"ref": "refs/tags/v1", "deleted": False}).skipped
    assert read_delivery("push", {"ref": "refs/heads/main", "deleted": True}).skipped
    push = read_delivery("push", {"ref": "refs/heads/DEMO-1", "after": "ab" * 20,
                                  "commits": [{"message": "one"}]}).push  # fmt: skip
    assert push is not None
    assert push.branch == "DEMO-1"
    assert push.messages == ("one",)
