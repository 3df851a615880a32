"""The consent page's policy: strict, never framed, its form leading on only to the app."""

from __future__ import annotations

import pytest

from crewboard.web.security import CSP, policy_sending_forms_to


@pytest.mark.parametrize(
    ("redirect_uri", "source"),
    [
        ("https://app.example/oauth/callback?x=1", "https://app.example"),
        ("https://App.Example:8443/cb", "https://app.example:8443"),
        ("http://127.0.0.1:9999/callback", "http://127.0.0.1:9999"),
        ("http://[::1]:33418/", "http://[::1]:33418"),
        ("com.example.app:/oauth2redirect", "com.example.app:"),
    ],
)
def test_the_consent_form_may_lead_on_to_the_apps_origin_only(
    redirect_uri: str, source: str
) -> None:
    policy = policy_sending_forms_to(redirect_uri)
    assert f"form-action 'self' {source};" in policy
    assert policy.replace(f" {source}", "") == CSP  # nothing else loosened
    assert "frame-ancestors 'none'" in policy


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://app.example;script-src *;/cb",  # would smuggle a directive in
        "https://app.example, https://evil.example/cb",
        "https://user@app.example/cb",
        "https://app.example'/cb",
        "http:/no-host",
        "https:",
        "javascript:alert(1)",
        "myapp:/cb",  # a private scheme without a dot (also refused at registration)
        "",
    ],
)
def test_anything_not_plainly_an_origin_keeps_the_strict_policy(redirect_uri: str) -> None:
    assert policy_sending_forms_to(redirect_uri) == CSP
