"""Templates and the safe rendering of people's and agents' markdown."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from crewboard.domain.identity.naming import name_of, name_parts
from crewboard.web.zones import zone_label

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
    return clean_html(_markdown().render(source or ""))


def render_inline(source: str | None) -> Markup:
    """One line of markdown (a message, an error) as safe inline HTML: `code`, emphasis and
    links rendered, no blocks, raw HTML off and nh3's allow-list."""
    return clean_html(_markdown().renderInline(source or ""))


def clean_html(
    html: str, tags: set[str] | None = None, attributes: dict[str, set[str]] | None = None
) -> Markup:
    """HTML made by the markdown parser, cleaned with the pages' allow-list; `tags` and
    `attributes` allow a few more (a renderer's own markers, never from the source: raw HTML
    is off), added to what a tag already keeps."""
    allowed = {tag: set(kept) for tag, kept in _ATTRIBUTES.items()}
    for tag, more in (attributes or {}).items():
        allowed.setdefault(tag, set()).update(more)
    clean = nh3.clean(
        html, tags=_TAGS | (tags or set()), attributes=allowed, url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )  # fmt: skip
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


def by_name(stamp: dict[str, Any] | None, people: dict[str, str] | None = None) -> str:
    """Who did something, in words, from its author stamp (the one rule: `name_of`); `people`
    names users a stamp keeps only by id."""
    return name_of(stamp, people)


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("crewboard.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["markdown"] = render_markdown
    env.filters["inline"] = render_inline
    env.filters["when"] = when
    env.filters["by_name"] = by_name
    env.filters["name_parts"] = name_parts
    env.filters["hour"] = hour
    env.filters["zone"] = zone_label
    return env


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(context)
