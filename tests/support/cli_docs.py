"""The part of docs/cli-json.md that documents the commands built from the operations, made
from the catalogue so it cannot drift: `python -m tests.support.cli_docs` rewrites it, and
tests/unit/test_cli_json_documented.py fails while the page differs from it."""

from __future__ import annotations

from pathlib import Path

from crewboard.cli.main import cli
from crewboard.cli.operations import built_commands, operation_params

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli-json.md"
BEGIN = "<!-- generated: operations (python -m tests.support.cli_docs) -->"
END = "<!-- end generated: operations -->"


def generated_section() -> str:
    """The page's section on the built commands, between its two markers."""
    parts = [
        BEGIN,
        "## Commands built from the operations",
        "",
        "Each command below runs one operation of the catalogue, the one an MCP client calls "
        "as the tool named in its section; REST serves the same operation. Its options are the "
        "tool's arguments in kebab-case (`projectId` → `--project-id`): a repeatable option for "
        "a list of plain values, JSON text for objects and lists of objects, `--x/--no-x` for a "
        "yes or no. An argument a tool needs but lets be null (`workspaceId`) may be left out; "
        "on a write, `--clear NAME` sends an argument as null, which clears it. "
        "A keyed write left without `--idempotency-key` gets a new key on each run; a script "
        "that retries passes its own. Values are checked as the tool checks them: a refusal "
        "names the option in `details.option` besides the tool's `details.field`.",
        "",
        "With `--json` each prints the tool's answer as **one line of compact JSON** (not "
        "indented, unlike the commands above), the same object an MCP client gets as the "
        "tool's first text part. Without it, a readable listing of that object and the tool's "
        "note (where to go on, what was left out) follow.",
        "",
    ]
    for words, op in built_commands(cli):
        name = " ".join(("crewboard", *words))
        options = ", ".join(f"`{p.option}`" for p in operation_params(op))
        parts += [
            f"### {name}",
            f"<!-- json: {name} -->",
            "",
            f"{op.title}: the `{op.name}` tool.",
            "",
            f"**Prints:** object: the `{op.name}` tool's answer.",
            "",
            f"Options: {options or 'none'}.",
            "",
        ]
    parts.append(END)
    return "\n".join(parts) + "\n"


def page_section(text: str) -> str | None:
    """The generated section as the page holds it, or None when it has none."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0:
        return None
    return text[start : end + len(END)] + "\n"


def rewrite() -> None:
    text = DOC.read_text(encoding="utf-8")
    old = page_section(text)
    new = generated_section()
    text = text.replace(old, new) if old is not None else text.rstrip("\n") + "\n\n" + new
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    rewrite()
