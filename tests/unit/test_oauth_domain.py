"""OAuth's rules that need no I/O: redirect URIs, metadata document URLs, addresses, caching."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import String

from crewboard.domain.oauth import (
    DOCUMENT_DEFAULT_CACHE,
    DOCUMENT_MAX_CACHE,
    DOCUMENT_MIN_CACHE,
    MAX_CHALLENGE_LENGTH,
    MAX_CLIENT_ID_LENGTH,
    MAX_CLIENT_NAME,
    MAX_REQUEST_ID_LENGTH,
    MAX_SCOPE_LENGTH,
    MAX_STATE_LENGTH,
    MAX_URI_LENGTH,
    cache_lifetime,
    document_url_problem,
    is_loopback_redirect,
    is_public_address,
    parse_scopes,
    redirect_uri_matches,
    redirect_uri_problem,
)
from crewboard.storage.oauth import tables as oauth_tables

# --- redirect_uri_matches -------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example.com/callback",
        "https://app.example.com:8443/cb?x=1",
        "http://127.0.0.1:9999/callback",
        "com.example.app:/oauth",
    ],
)
def test_a_redirect_uri_matches_itself(uri: str) -> None:
    assert redirect_uri_matches(uri, uri)


@pytest.mark.parametrize(
    ("registered", "asked"),
    [
        ("http://127.0.0.1:9999/callback", "http://127.0.0.1:51234/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback"),
        ("http://localhost:9999/cb?app=1", "http://localhost:1/cb?app=1"),
        ("http://[::1]:9999/cb", "http://[::1]:40000/cb"),
        ("http://[::1]/cb", "http://[::1]:40000/cb"),
    ],
)
def test_a_loopback_redirect_may_change_only_its_port(registered: str, asked: str) -> None:
    assert redirect_uri_matches(registered, asked)


@pytest.mark.parametrize(
    ("registered", "asked"),
    [
        ("http://127.0.0.1:9999/callback", "http://127.0.0.1:9999/callbacks"),  # path
        ("http://127.0.0.1:9999/callback", "http://127.0.0.1:9999/callback/"),
        ("http://127.0.0.1:9999/cb?a=1", "http://127.0.0.1:9999/cb?a=2"),  # query
        ("http://127.0.0.1:9999/cb", "http://127.0.0.1:9999/cb?a=1"),
        ("http://127.0.0.1:9999/cb", "http://localhost:9999/cb"),  # another loopback host
        ("http://127.0.0.1:9999/cb", "http://127.0.0.1:9998/cb#frag"),  # a fragment
        ("http://127.0.0.1:9999/cb", "https://127.0.0.1:9999/cb"),  # the scheme
        ("https://app.example.com/cb", "https://app.example.com:8443/cb"),  # https port
        ("https://app.example.com:443/cb", "https://app.example.com/cb"),
        ("http://app.example.com:80/cb", "http://app.example.com:81/cb"),  # http off loopback
        ("https://app.example.com/cb", "https://APP.example.com/cb"),  # exact, not normalised
        ("com.example.app:/cb", "com.example.app:/cb2"),
    ],
)
def test_any_other_change_of_a_redirect_uri_is_refused(registered: str, asked: str) -> None:
    assert not redirect_uri_matches(registered, asked)


_HOSTS = st.sampled_from(["app.example.com", "example.org", "10.0.0.7", "xn--bcher-kva.example"])
_SEGMENTS = st.lists(st.text("abcXYZ019-._~", min_size=0, max_size=6), max_size=3)


@st.composite
def off_loopback_uris(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["https", "http", "com.example.app"]))
    host = draw(_HOSTS)
    port = draw(st.one_of(st.none(), st.integers(1, 65535)))
    path = "/" + "/".join(draw(_SEGMENTS))
    query = draw(st.one_of(st.none(), st.text("abc=&19", min_size=1, max_size=6)))
    netloc = host if port is None else f"{host}:{port}"
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


@st.composite
def loopback_uris(draw: st.DrawFn) -> str:
    host = draw(st.sampled_from(["127.0.0.1", "localhost", "[::1]"]))
    port = draw(st.one_of(st.none(), st.integers(1, 65535)))
    path = "/" + "/".join(draw(_SEGMENTS))
    query = draw(st.one_of(st.none(), st.text("abc=&19", min_size=1, max_size=6)))
    netloc = host if port is None else f"{host}:{port}"
    return f"http://{netloc}{path}" + (f"?{query}" if query else "")


@settings(deadline=None)  # a loaded CI machine is no failure of these rules
@given(off_loopback_uris(), off_loopback_uris())
def test_a_redirect_off_loopback_matches_only_itself(registered: str, asked: str) -> None:
    assert redirect_uri_matches(registered, asked) == (registered == asked)


@settings(deadline=None)  # a loaded CI machine is no failure of these rules
@given(off_loopback_uris(), loopback_uris())
def test_a_loopback_redirect_never_matches_one_off_loopback(other: str, loopback: str) -> None:
    assert not redirect_uri_matches(other, loopback)
    assert not redirect_uri_matches(loopback, other)


@settings(deadline=None)  # a loaded CI machine is no failure of these rules
@given(loopback_uris(), st.integers(1, 65535))
def test_a_loopback_redirect_matches_itself_on_any_port(registered: str, port: int) -> None:
    assert is_loopback_redirect(registered)
    scheme_host, _, rest = registered.partition("://")
    netloc, slash, tail = rest.partition("/")
    host = netloc if netloc.endswith("]") else netloc.rsplit(":", 1)[0]
    moved = f"{scheme_host}://{host}:{port}{slash}{tail}"
    assert redirect_uri_matches(registered, moved)
    assert not redirect_uri_matches(registered, moved + "x")


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1.evil.example/cb",
        "http://user@127.0.0.1:9999/cb",
        "https://127.0.0.1:9999/cb",
        "http://127.0.0.2:9999/cb",
        "http://[::2]:9999/cb",
    ],
)
def test_lookalikes_of_loopback_are_not_loopback(uri: str) -> None:
    assert not is_loopback_redirect(uri)


# --- redirect_uri_problem ------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example.com/callback",
        "https://app.example.com:8443/cb?x=1",
        "http://127.0.0.1:9999/callback",
        "http://localhost/cb",
        "http://[::1]:9999/cb",
        "http://[::1]/cb",
        "com.example.app:/oauth",
    ],
)
def test_these_redirect_uris_can_be_registered(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    ("uri", "said"),
    [
        ("http://app.example.com/cb", "http"),
        ("http://10.0.0.7:8080/cb", "http"),
        ("https://app.example.com/cb#done", "fragment"),
        ("http://127.0.0.1:9999/cb#x", "fragment"),
        ("javascript:alert(1)", "scheme"),
        ("JavaScript:alert(1)", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("vbscript:msgbox", "scheme"),
        ("/relative/cb", "scheme"),
        ("", "scheme"),
        ("myapp:/cb", "dot"),
        ("https:///cb", "host"),
        ("https://app.example.com/" + "a" * MAX_URI_LENGTH, "longer"),
    ],
)
def test_these_redirect_uris_are_refused_saying_why(uri: str, said: str) -> None:
    problem = redirect_uri_problem(uri)
    assert problem is not None
    assert said in problem


# URIs that URL parsers read differently (the host from user information, a backslash taken
# for a slash, a percent-encoded or oddly written host): each is refused outright, at
# registration and as a metadata document's redirect or address.
PARSER_TRAPS = [
    ("http://127.0.0.1:1@evil.example/cb", "credentials"),
    ("http://localhost@evil.example/cb", "credentials"),
    ("http://[::1]@evil.example/cb", "credentials"),
    ("https://@app.example.com/cb", "credentials"),
    ("https://user:pw@app.example.com/cb", "credentials"),
    ("com.example.app://user@host/cb", "credentials"),
    ("http://evil.example\\@127.0.0.1/cb", "character"),
    ("http://127.0.0.1\\.evil.example/cb", "character"),
    ("http://127.0.0.1%2f@evil.example/cb", "credentials"),
    ("https://app%2eexample.com/cb", "percent"),
    ("http://127.0.0.1%00.evil.example/cb", "percent"),
    ("http://[::1%25eth0]/cb", "percent"),
    ("http://[::1 ]/cb", "character"),
    ("http://[v1.x]/cb", "IPv6"),
    ("http://[127.0.0.1]/cb", "well-formed"),
    ("http://127.0.0.1:99999/cb", "port"),
    ("http://127.0.0.1:-1/cb", "port"),
    ("HTTP://127.0.0.1/cb", "lowercase"),
    ("Https://app.example.com/cb", "lowercase"),
    ("http://127.0.0.1 @evil.example/cb", "character"),
    (" http://127.0.0.1/cb", "character"),
    ("http://127.0.0.1/cb\n", "character"),
    ("http://127.0.0.1\t/cb", "character"),
    ("https://app.example.com/c\x7fb", "character"),
    ("https://bücher.example/cb", "character"),
    ("https://app.example.com/cb\u2028", "character"),
]


@pytest.mark.parametrize(("uri", "said"), PARSER_TRAPS)
def test_a_uri_parsers_read_differently_is_never_a_redirect_uri(uri: str, said: str) -> None:
    problem = redirect_uri_problem(uri)
    assert problem is not None
    assert said in problem
    assert not is_loopback_redirect(uri)


@pytest.mark.parametrize(("uri", "said"), PARSER_TRAPS)
def test_a_uri_parsers_read_differently_is_never_a_document_url(uri: str, said: str) -> None:
    url = uri.replace("http://", "https://").replace("/cb", "/client.json")
    problem = document_url_problem(url)
    assert problem is not None
    assert said in problem or "https" in problem


def test_the_loopback_host_is_the_one_a_url_parser_reads() -> None:
    assert is_loopback_redirect("http://127.0.0.1:1/cb")
    assert not is_loopback_redirect("http://127.0.0.1:1@evil.example/cb")
    assert not redirect_uri_matches("http://127.0.0.1/cb", "http://127.0.0.1:1@evil.example/cb")
    assert not redirect_uri_matches("http://127.0.0.1:1@evil.example/cb", "http://127.0.0.1/cb")


# --- document_url_problem ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://app.example.com/client.json",
        "https://app.example.com:8443/oauth/client-metadata.json",
        "https://127.0.0.1:4443/client.json",  # the address is the fetch's to judge
    ],
)
def test_these_document_urls_are_accepted(url: str) -> None:
    assert document_url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://app.example.com/client.json", "https"),
        ("ftp://app.example.com/client.json", "https"),
        ("https://app.example.com", "path"),
        ("https://app.example.com/", "path"),
        ("https:///client.json", "host"),
        ("https://app.example.com/client.json#x", "fragment"),
        ("https://user:pw@app.example.com/client.json", "credentials"),
        ("https://user@app.example.com/client.json", "credentials"),
        ("https://app.example.com/a/../client.json", "dot"),
        ("https://app.example.com/a/./client.json", "dot"),
        ("https://app.example.com/" + "a" * MAX_URI_LENGTH, "longer"),
    ],
)
def test_these_document_urls_are_refused_saying_why(url: str, said: str) -> None:
    problem = document_url_problem(url)
    assert problem is not None
    assert said in problem


# --- is_public_address ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "127.0.0.1",
        "127.1.2.3",
        "0.0.0.0",  # noqa: S104 - an address under test
        "169.254.169.254",  # link-local: a cloud's metadata service
        "100.64.0.1",  # shared address space (carrier-grade NAT)
        "224.0.0.1",  # multicast
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fe80::1%eth0",  # with a zone
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",  # IPv4-mapped: judged as its IPv4
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
    ],
)
def test_private_loopback_link_local_and_mapped_addresses_are_not_public(address: str) -> None:
    assert not is_public_address(address)


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_internet_addresses_are_public(address: str) -> None:
    assert is_public_address(address)


# --- cache_lifetime ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "lifetime"),
    [
        (None, DOCUMENT_DEFAULT_CACHE),
        ("", DOCUMENT_DEFAULT_CACHE),
        ("public", DOCUMENT_DEFAULT_CACHE),
        ("max-age=600", timedelta(minutes=10)),
        ("public, max-age=7200", timedelta(hours=2)),
        ("Max-Age=7200", timedelta(hours=2)),
        ("max-age=0", DOCUMENT_MIN_CACHE),
        ("max-age=10", DOCUMENT_MIN_CACHE),
        ("max-age=99999999", DOCUMENT_MAX_CACHE),
        ("max-age=-5", DOCUMENT_DEFAULT_CACHE),
        ("max-age=abc", DOCUMENT_DEFAULT_CACHE),
        ("no-store", DOCUMENT_MIN_CACHE),
        ("no-cache", DOCUMENT_MIN_CACHE),
        ("no-store, max-age=7200", DOCUMENT_MIN_CACHE),
        ("max-age=7200, no-store", DOCUMENT_MIN_CACHE),
    ],
)
def test_a_document_is_cached_for_its_max_age_within_bounds(
    header: str | None, lifetime: timedelta
) -> None:
    assert cache_lifetime(header) == lifetime


@settings(deadline=None)  # a loaded CI machine is no failure of these rules
@given(st.one_of(st.none(), st.text(max_size=60)))
def test_a_document_is_never_cached_outside_the_bounds(header: str | None) -> None:
    assert DOCUMENT_MIN_CACHE <= cache_lifetime(header) <= DOCUMENT_MAX_CACHE


@settings(deadline=None)  # a loaded CI machine is no failure of these rules
@given(st.integers(min_value=0, max_value=10**12))
def test_a_max_age_is_clamped_to_the_bounds(seconds: int) -> None:
    expected = min(DOCUMENT_MAX_CACHE, max(DOCUMENT_MIN_CACHE, timedelta(seconds=seconds)))
    assert cache_lifetime(f"max-age={seconds}") == expected


# --- parse_scopes --------------------------------------------------------------------------


def test_scopes_are_split_on_spaces_without_repeats_in_the_order_given() -> None:
    assert parse_scopes("read  tasks.manage read specs.write") == [
        "read",
        "tasks.manage",
        "specs.write",
    ]
    assert parse_scopes(["read", "", "read"]) == ["read"]
    assert parse_scopes(None) == []


# --- every column with a length holds what can reach it -------------------------------------

# Each String column of the oauth tables: the limit of the value a client can send into it (a
# domain constant, checked before storage), or what makes the value ours (never a client's).
CLIENT_GIVEN = {
    ("oauth_clients", "id"): MAX_CLIENT_ID_LENGTH,  # a metadata document's URL
    ("oauth_clients", "name"): MAX_CLIENT_NAME,  # cut to it (clients.client_name)
    ("oauth_clients", "scope"): MAX_SCOPE_LENGTH,  # known names once each (registered_scope)
    ("oauth_requests", "id"): MAX_REQUEST_ID_LENGTH,  # looked up from the consent form
    ("oauth_requests", "client_id"): MAX_CLIENT_ID_LENGTH,
    ("oauth_requests", "redirect_uri"): MAX_URI_LENGTH,
    ("oauth_requests", "resource"): MAX_URI_LENGTH,  # must equal this server's /mcp
    ("oauth_requests", "code_challenge"): MAX_CHALLENGE_LENGTH,
    ("oauth_requests", "state"): MAX_STATE_LENGTH,
    ("oauth_grants", "client_id"): MAX_CLIENT_ID_LENGTH,
    ("oauth_grants", "client_name"): MAX_CLIENT_NAME,
    ("oauth_grants", "resource"): MAX_URI_LENGTH,
    ("oauth_secrets", "redirect_uri"): MAX_URI_LENGTH,
    ("oauth_secrets", "code_challenge"): MAX_CHALLENGE_LENGTH,
}
SERVER_MADE = {
    ("oauth_clients", "kind"),
    ("oauth_clients", "auth_method"),  # one of AUTH_METHODS
    ("oauth_clients", "secret_hash"),
    ("oauth_grants", "id"),
    ("oauth_grants", "user_id"),
    ("oauth_grants", "project_id"),  # a project the person opened
    ("oauth_grants", "role"),  # one of Role
    ("oauth_grants", "revoked_reason"),
    ("oauth_secrets", "secret_hash"),
    ("oauth_secrets", "kind"),
    ("oauth_secrets", "grant_id"),
}


def test_every_oauth_column_with_a_length_is_guarded_by_the_limit_checked_before_storage() -> None:
    """A new String column fails here until its limit is named (and checked at its door)."""
    columns = {
        (table.name, column.name): column.type.length
        for table in oauth_tables.metadata.sorted_tables
        if table.name.startswith("oauth_")
        for column in table.columns
        if isinstance(column.type, String)
    }
    assert set(columns) == set(CLIENT_GIVEN) | SERVER_MADE
    for place, limit in CLIENT_GIVEN.items():
        assert columns[place] == limit, place
