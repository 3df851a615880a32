"""`python -m bench specs`: re-anchoring comment threads when a spec file is saved.

In-process (no server: the cost is in the service and the database, not the transport). A
generated spec file of about 2,000 lines gets 100 comment threads, each on a passage of its
own line, through the services. The file is then saved again and again, alternating between
two texts: the second adds a paragraph near the top (every passage moves), rewrites a word
inside five passages (their quotes change) and edits lines between passages; the first
undoes it, so every thread stays anchored. A twin file with the same texts and no threads is
saved the same way, in alternation with the first.

Figures (median and p95 of the saves):
- `reanchor`: the pure step, `domain.spec_comments.reanchor` of 100 anchors over one save;
- `save, 100 threads` and `save, no threads`: the whole `update_spec_file` use case;
- the difference of the two medians: what re-anchoring adds to a save (target: under 50 ms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.process import throwaway_postgres
from bench.runner import add_database_options
from crewboard.domain.ids import new_id
from crewboard.domain.models import Actor
from crewboard.domain.spec_comments import place, reanchor
from crewboard.services.identity.users import do_create_user, person_actor
from crewboard.services.projects import projects
from crewboard.services.specs import comments, files
from crewboard.storage import migrate
from crewboard.storage.database import Database

TARGET_MS = 50.0
WORDS = ["export", "import", "token", "limit", "queue", "worker", "table", "column", "header",
         "archive", "audit", "stream", "request", "answer", "retry", "backlog", "review",
         "draft", "owner", "schedule", "budget"]  # fmt: skip


def spec_texts(lines: int, threads: int, seed: int = 7) -> tuple[str, str, list[str]]:
    """(the first text, the edited one, the passages to comment on: one per chosen line)."""
    rng = random.Random(seed)  # noqa: S311 - generated text, not a secret
    body: list[str] = []
    for n in range(lines):
        if n % 40 == 0:
            body.append(f"## Section {n // 40 + 1}\n")
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12)))
            body.append(f"- Item {n}: the {words}.\n")
    chosen = sorted(rng.sample([n for n in range(lines) if n % 40], threads))
    passages = [body[n][2 : 2 + 30] for n in chosen]  # "Item N: the …", unique by its number
    edited = list(body)
    for n in chosen[:5]:  # a word inside five passages
        edited[n] = edited[n].replace(": the ", ": a ", 1)
    taken = set(chosen)
    for n in range(3, lines, 97):  # lines between passages
        if n not in taken:
            edited[n] = edited[n].rstrip("\n") + " (revised)\n"
    edited.insert(2, "A paragraph added near the top of the file, as an agent's save adds one.\n")
    return "".join(body), "".join(edited), passages


@contextmanager
def database(kind: str, postgres_url: str) -> Iterator[Database]:
    if kind == "postgresql":
        with throwaway_postgres(postgres_url) as url:
            db = Database(url)
            try:
                yield db
            finally:
                db.dispose()
        return
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            yield db
        finally:
            db.dispose()


def seed(db: Database, first: str, passages: list[str]) -> tuple[Actor, str, str]:
    """The owner, and the ids of the file with a thread on each passage and of its twin."""
    migrate.upgrade(db)
    user = db.write(
        lambda uow: do_create_user(
            uow,
            email="bench@example.com",
            display_name="bench",
            password_hash="!",  # noqa: S106 - no password: nobody signs in
        )
    )
    owner = person_actor(user)
    projects.create_project(db, owner, workspace_id=None, key="SPEC", name="Specs")

    def upload(path: str) -> str:
        made = files.upload_spec_file(
            db, owner, project="SPEC", workspace_id=None, path=path, content=first.encode(),
            idempotency_key=None,
        )  # fmt: skip
        return str(made.body["file"]["id"])

    commented, plain = upload("docs/commented.md"), upload("docs/plain.md")
    for passage in passages:
        comments.create_spec_file_comment_thread(
            db, owner, project="SPEC", workspace_id=None, ref=files.FileRef(file_id=commented),
            anchor_quote=passage, anchor_prefix=None, anchor_suffix=None,
            body="Is this still right?", idempotency_key=new_id("key"),
        )  # fmt: skip
    return owner, commented, plain


def timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return (time.perf_counter() - began) * 1000


def saver(db: Database, owner: Actor, file_id: str) -> Callable[[str], float]:
    """Save `text` as the file's next revision; the milliseconds update_spec_file took."""
    ref = files.FileRef(file_id=file_id)

    def save(text: str) -> float:
        version = files.get_spec_file(db, owner, project="SPEC", ref=ref)["file"]["contentVersion"]

        def work() -> object:
            return files.update_spec_file(
                db, owner, project="SPEC", workspace_id=None, ref=ref, content=text.encode(),
                expected_version=version, idempotency_key=None,
            )  # fmt: skip

        return timed(work)

    return save


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * len(ordered)))]


def run(args: argparse.Namespace) -> int:
    first, edited, passages = spec_texts(args.lines, args.threads)
    anchors = [place(first, p) for p in passages]
    pure = [timed(lambda: reanchor(first, edited, anchors)) for _ in range(args.saves)]
    with database(args.database, args.postgres_url) as db:
        owner, commented, plain = seed(db, first, passages)
        with_threads, without = saver(db, owner, commented), saver(db, owner, plain)
        timings: dict[str, list[float]] = {"with": [], "without": []}
        for n in range(args.warmup + args.saves):
            text = edited if n % 2 == 0 else first
            pair = (with_threads(text), without(text))
            if n >= args.warmup:
                timings["with"].append(pair[0])
                timings["without"].append(pair[1])
        listed = comments.list_spec_file_comments(
            db, owner, project="SPEC", ref=files.FileRef(file_id=commented)
        )
    anchored = sum(not t["orphaned"] for t in listed["threads"])
    rows = [
        ("reanchor (domain)", summary(pure)),
        (f"save, {args.threads} threads", summary(timings["with"])),
        ("save, no threads", summary(timings["without"])),
    ]
    added = rows[1][1][0] - rows[2][1][0]
    print(
        f"Re-anchoring on a save: {args.database}, {first.count(chr(10))} lines "
        f"({len(first.encode())} bytes), {args.saves} saves after {args.warmup} warm-up"
    )
    print(f"{'':<24}{'median ms':>12}{'p95 ms':>10}")
    for label, (median, p95) in rows:
        print(f"{label:<24}{median:>12.1f}{p95:>10.1f}")
    met = added < TARGET_MS and rows[0][1][0] < TARGET_MS
    print(
        f"Re-anchoring adds {added:.1f} ms to a save (target under {TARGET_MS:.0f}): "
        f"{'met' if met else 'MISSED'}; {anchored} of {args.threads} threads still anchored."
    )
    return 0 if met and anchored == args.threads else 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench specs", description="Re-anchoring comment threads on a save."
    )
    add_database_options(parser)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--saves", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=4)
    sys.exit(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
