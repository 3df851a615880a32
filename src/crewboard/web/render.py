"""Templates and the safe rendering of people's and agents' markdown."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

# What rendered markdown may keep: formatting, links and images; never script, style, frames,
# event handlers or form controls (nh3 drops every attribute not listed here).
_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "th": {"align"},
    "td": {"align"},
}
_SCHEMES = {"http", "https", "mailto"}


@functools.cache
def _markdown() -> MarkdownIt:
    # commonmark with raw HTML off: "<script>" in the source stays text.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(source: str | None) -> Markup:
    """Markdown as HTML that is safe to put in a page (raw HTML off, then nh3's allow-list)."""
    html = _markdown().render(source or "")
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return Markup(clean)  # noqa: S704 - cleaned by nh3 just above


def when(value: str | datetime | None) -> str:
    """A timestamp as people read it: 2026-11-30 14:05 UTC."""
    if value is None or value == "":
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def hour(value: str | datetime | None) -> str:
    """A time of today or the next hours as people read it: 14:05 UTC."""
    if value is None or value == "":
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.strftime("%H:%M UTC")


def by_name(stamp: dict[str, Any] | None) -> str:
    """Who did something, in words, from its author stamp: a person by name (and the token
    they used, "Owner via laptop"); an agent by its seat or token, and whose agent it is."""
    if not stamp:
        return "someone"
    kind = stamp.get("kind")
    if kind == "system":
        return "Crewboard"
    if kind == "rule":
        return "an acceptance rule"
    person = stamp.get("displayName") or stamp.get("userId") or "someone"
    token = stamp.get("tokenName")
    if kind == "agent_token":
        shown = stamp.get("roleName") or token or person
        return shown if shown == person else f"{shown} (for {person})"
    if kind == "personal_token":
        return f"{person} via {token or 'a token'}"
    return str(person)


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("crewboard.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = render_markdown
    env.filters["when"] = when
    env.filters["by_name"] = by_name
    env.filters["hour"] = hour
    return env


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(context)
