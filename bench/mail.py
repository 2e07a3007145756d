"""Outbox delivery rate into a local SMTP server (aiosmtpd), with and without connection reuse.

Run by hand, never in CI (ARCHITECTURE §8 target: at least 100 mails/s to a local SMTP server with connection
reuse)::

    .venv/bin/python bench/mail.py                       # SQLite, 1000 mails per row
    .venv/bin/python bench/mail.py --mails 2000 --postgres postgresql+psycopg://postgres@127.0.0.1/test

Each row writes ``--mails`` mails into the outbox the way the domain does, then drains it in process with
``service.domain.delivery.deliver_due_mail`` (claim, render, compose, send, record each outcome) and times
the drain (wall time, and the CPU time of this process, which also runs the SMTP server: the CPU time is
the fairer number on a busy machine). ``batch 100`` is the service's setting: one SMTP connection and one
claim per 100 mails; ``batch 1`` opens a connection (and claims) per mail. ``your_turn`` mails carry the
board picture (a PNG, drawn once per game state); their boards differ a little from one mail to the next
and come back every nine mails, as for the readers of one state; with ``--distinct-boards`` every mail has
a board of its own, as when each turn mail follows a new step. ``auto_passed`` mails are text and HTML only.

``CPU ms/mail`` counts the whole process (the SMTP server too); ``worker CPU ms/mail`` only the thread that
drains the outbox, which is what one worker core spends on a mail. To compare two versions of the code on
the same machine in one run (the machine is shared, so absolute figures move from run to run)::

    git archive <commit> | tar -x -C /tmp/mail-reference     # the reference tree, e.g. an older commit
    .venv/bin/python bench/mail.py --reference /tmp/mail-reference --runs 3

runs this bench on the reference tree's code and on this tree's, in turn (three each), on "your turn" mails
in batches of 100, and prints each run's worker CPU per mail and the ratio of the medians. With ``--drains N``
each run is instead N drains of one text mail each (five more first, not counted), as a step's "your turn"
mail goes out in a drain of its own: the figures are then per drain.

Before its rows, the bench does what the tree's mail worker does as it starts, where that tree's worker
does anything (``worker/tasks/mail.py``: the boards' ground and palette drawn, and the templates compiled, as
it starts): the CPU
time it takes is printed apart (``worker start``), not counted in any row, as it is not in any drain of
that worker. A tree whose worker draws nothing at start (an older one) pays for it in its first row, as its
worker did on its first mails. ``--cold`` leaves the start out, so that the first row pays for it in every
tree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy import create_engine, make_url, text

HERE = Path(__file__).resolve().parent.parent
# ``--code DIR``: import the project from DIR instead of this tree (see ``--reference``).
CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else HERE
sys.path.insert(0, str(CODE))

from emails.delivery import SMTPBackend, backend_from_config  # noqa: E402
from emails.messages import AutoPassed, Message, YourTurn  # noqa: E402
from emails.samples import BOARD  # noqa: E402
from service import create_app  # noqa: E402
from service.domain import delivery  # noqa: E402
from service.domain.models import Player, utcnow  # noqa: E402
from service.domain.outbox import insert_mail_row  # noqa: E402
from service.infra.db import get_engine, get_session, upgrade_database  # noqa: E402


class Counter:
    def __init__(self) -> None:
        self.mails = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.mails += 1
        return "250 OK"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


MESSAGES: dict[str, Message] = {
    "auto_passed": AutoPassed(
        game_id=1, game_name="Benchmark", player_name="Ann", reason="deadline", defending=False, version=2
    ),
    "your_turn": YourTurn(
        game_id=1,
        game_name="Benchmark",
        player_name="Ann",
        deadline_at=datetime(2030, 1, 1, 12, 0, tzinfo=UTC),
        turn=4,
        turns=10,
        version=30,
        step_key="4:1:-",
        seat=1,
        defending=False,
        hand=0,
        board=BOARD,
        # A reference tree from before links were minted at sending stores the seat's link in the message.
        **({"turn_url": "https://smallworld.example/play/token"} if "turn_url" in YourTurn.model_fields else {}),
    ),
}


def message_of(template: str, n: int, distinct: bool = False) -> Message:
    """The ``n``-th mail: boards differ in their token counts and reader, so no two pictures in a row are
    the same (nine boards come back in turn). With ``distinct``, no two boards are the same: the first four
    held regions also count ``n`` in base 9, so every mail has a picture of its own."""
    message = MESSAGES[template]
    if not isinstance(message, YourTurn):
        return message
    board = message.board
    regions = [dict(r, tokens=(r["tokens"] + n) % 9 + 1) if r.get("tokens") else r for r in board["regions"]]
    if distinct:
        held = [i for i, r in enumerate(regions) if r.get("tokens")][:4]
        for digit, i in enumerate(held):
            regions[i] = dict(regions[i], tokens=n // 9**digit % 9 + 1)
    you = n % len(board["players"])
    return message.model_copy(update={"board": dict(board, regions=regions, you=you), "step_key": f"{n}:{you}:-"})


def fill(app: Any, template: str, count: int, distinct: bool = False, first: int = 0) -> None:
    with app.app_context():
        session = get_session()
        player = Player(email=f"{uuid.uuid4().hex[:8]}@example.org", display_name="Ann")
        session.add(player)
        session.flush()
        for n in range(first, first + count):
            message = message_of(template, n, distinct)
            # About no game row, and no dedupe key: every mail is written.
            insert_mail_row(session, player=player, template=message.template, context=message.context())
            if (n - first) % 500 == 499:
                session.commit()
        session.commit()


def bench_app(port: int, database_url: str | None = None) -> Any:
    """The service, sending to the SMTP server on ``port``, on a database of its own (SQLite in a new folder,
    or ``database_url``), upgraded."""
    settings: dict[str, Any] = {
        "TESTING": True,
        "INSTANCE_PATH": tempfile.mkdtemp(prefix="bench-mail-"),
        "MAIL_BACKEND": "smtp",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": port,
        # No broker round trip per commit: the drain is the only delivery.
        "BROKER_URL": "memory://",
    }
    if database_url:
        settings["DATABASE_URL"] = database_url
    app = create_app(settings)
    upgrade_database(get_engine(app))
    return app


def worker_start(cold: bool) -> float | None:
    """What this code's mail worker does as it starts, done now; the CPU seconds it took, or None if it does
    nothing at start (an older tree) or with ``cold``."""
    import importlib

    if cold:
        return None
    worker = importlib.import_module("worker.tasks.mail")
    # By its name in each tree: the boards' ground and the templates, or (an older tree) the ground alone.
    start = getattr(worker, "prepare_rendering", None) or getattr(worker, "draw_the_boards_ground", None)
    if start is None:
        return None
    cpu = time.thread_time()
    start()
    return time.thread_time() - cpu


def run(
    app: Any, counter: Counter, template: str, count: int, batch: int, distinct: bool = False, first: int = 0
) -> tuple[float, float, int, int]:
    fill(app, template, count, distinct, first)
    counter.mails = 0
    settings = delivery.MailSettings(sender="Bench <bench@example.org>", batch_size=batch, budget_seconds=3600)
    backend = backend_from_config(app.config)
    assert isinstance(backend, SMTPBackend)
    with app.app_context():
        started, cpu, worker = time.perf_counter(), time.process_time(), time.thread_time()
        report = delivery.deliver_due_mail(
            get_session(), backend, app.extensions["smallworld.links"], settings, now=utcnow()
        )
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        worker = time.thread_time() - worker
    assert report.sent == count and counter.mails == count, (report, counter.mails)
    # Counted by the backend: the server's session objects are freed and their ids reused.
    return elapsed, cpu, worker, counter.mails, backend.connections_opened


def run_drains(
    app: Any, counter: Counter, template: str, drains: int, first: int = 0
) -> tuple[float, float, float, int, int]:
    """``drains`` drains of one mail each, as a step's mail goes out in a drain of its own: each mail written,
    then drained; only the drains are timed (with ``--drains``)."""
    settings = delivery.MailSettings(sender="Bench <bench@example.org>", budget_seconds=3600)
    backend = backend_from_config(app.config)
    assert isinstance(backend, SMTPBackend)
    counter.mails = 0
    elapsed = cpu = worker = 0.0
    for n in range(first, first + drains):
        fill(app, template, 1, first=n)
        with app.app_context():
            started, cpu_at, worker_at = time.perf_counter(), time.process_time(), time.thread_time()
            report = delivery.deliver_due_mail(
                get_session(), backend, app.extensions["smallworld.links"], settings, now=utcnow()
            )
            elapsed += time.perf_counter() - started
            cpu += time.process_time() - cpu_at
            worker += time.thread_time() - worker_at
        assert report.sent == 1, report
    assert counter.mails == drains, counter.mails
    return elapsed, cpu, worker, counter.mails, backend.connections_opened


#: ``--stages``: where the drain's thread spends its CPU time, by the function it is in (the innermost of
#: these): (module, attribute, stage). Names missing from a tree (an older one) are left out.
STAGES = [
    ("service.drain.queue", "drain", "the rest (outcomes, envelope, checks)"),
    ("service.drain.queue", "claim", "claim"),
    ("service.drain.queue._Outcomes", "store", "record outcomes"),
    ("service.domain.delivery", "_rendered_and_envelope", "signed links, envelope"),
    ("emails.messages", "from_json", "validate the row (pydantic)"),
    ("emails.messages", "render", "render (values, board, templates)"),
    ("emails.render._inliner", "inline", "CSS inlining"),
    ("jinja2.Template", "render", "templates"),
    ("service.domain.delivery", "compose", "compose (email.mime parts)"),
    ("service.domain.delivery", "write", "write the mail"),
    ("emails.delivery", "to_bytes", "write the mail"),
    ("smtplib.SMTP", "sendmail", "SMTP client (sendmail)"),
]


def stage_timer() -> dict[str, float]:
    """Wrap the :data:`STAGES` so that each adds the thread CPU time spent in it (and not in an inner stage)
    to the dictionary returned."""
    import importlib

    totals: dict[str, float] = {}
    stack: list[list[Any]] = []

    def timed(function: Any, stage: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            now = time.thread_time()
            if stack:
                totals[stack[-1][0]] = totals.get(stack[-1][0], 0.0) + now - stack[-1][1]
            stack.append([stage, now])
            try:
                return function(*args, **kwargs)
            finally:
                end = time.thread_time()
                totals[stage] = totals.get(stage, 0.0) + end - stack.pop()[1]
                if stack:
                    stack[-1][1] = end

        return run

    for path, name, stage in STAGES:
        owner: Any
        try:
            owner = importlib.import_module(path)
        except ImportError:
            module_path, _, attribute = path.rpartition(".")
            owner = getattr(importlib.import_module(module_path), attribute, None)
        if owner is None or not hasattr(owner, name):
            continue
        if path == "emails.render._inliner":  # a compiled object: its method is wrapped on a stand-in

            class Inliner:
                inline = staticmethod(timed(owner.inline, stage))

            importlib.import_module("emails.render")._inliner = Inliner()
            continue
        setattr(owner, name, timed(getattr(owner, name), stage))
    return totals


def stages(mails: int, postgres: str | None = None) -> None:
    """One row of "your turn" mails in batches of 100 on SQLite, or on PostgreSQL with ``postgres`` (after a
    first small one that draws the pictures), and the worker's CPU time per mail in each stage."""
    counter = Counter()
    port = free_port()
    controller = Controller(counter, hostname="127.0.0.1", port=port)
    controller.start()
    url, drop = postgres_schema(postgres) if postgres else (None, None)
    try:
        app = bench_app(port, url)
        run(app, counter, "your_turn", 18, 100)
        totals = stage_timer()
        _, _, worker, sent, _ = run(app, counter, "your_turn", mails, 100, first=18)
        get_engine(app).dispose()
    finally:
        controller.stop()
        if drop:
            drop()
    print(f"code from {CODE}, {sent} mails, {'PostgreSQL' if postgres else 'SQLite'}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for stage, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"{stage:<40} {seconds / sent * 1000:6.3f} ms")
    print(f"{'total (worker CPU)':<40} {worker / sent * 1000:6.3f} ms")


def postgres_schema(url: str) -> tuple[str, Any]:
    engine = create_engine(url)
    name = f"bench_{uuid.uuid4().hex[:10]}"
    with engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
        connection.commit()

    def drop() -> None:
        with engine.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
            connection.commit()
        engine.dispose()

    scoped = make_url(url).update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(hide_password=False)
    return scoped, drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mails", type=int, default=1000, help="mails per row (default 1000)")
    parser.add_argument("--postgres", help="also measure on this PostgreSQL database (a schema is created)")
    parser.add_argument(
        "--distinct-boards",
        action="store_true",
        help="give every turn mail a board of its own (no picture drawn twice), as when each is a new game state",
    )
    parser.add_argument(
        "--reference",
        metavar="DIR",
        help="compare with the code in DIR (a tree of this project, e.g. from git archive): runs in turn",
    )
    parser.add_argument("--runs", type=int, default=3, help="with --reference: runs of each (default 3)")
    parser.add_argument("--code", metavar="DIR", help="import the project from DIR (used by --reference)")
    parser.add_argument("--only", choices=("auto_passed", "your_turn"), help="one kind of mail, batches of 100")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines (used by --reference)")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="skip what the mail worker does as it starts (the boards' ground): the first row pays for it",
    )
    parser.add_argument(
        "--drains",
        type=int,
        metavar="N",
        help="instead of the rows: N drains of one text mail each (after 5 not counted), as a step's mail goes out",
    )
    parser.add_argument(
        "--stages", action="store_true", help="the worker's CPU time per mail in each stage (with --code: that tree's)"
    )
    args = parser.parse_args()
    if args.stages:
        stages(args.mails, args.postgres)
        return
    if args.reference:
        compare(args)
        return

    counter = Counter()
    port = free_port()
    controller = Controller(counter, hostname="127.0.0.1", port=port)
    controller.start()
    databases: list[tuple[str, str | None, Any]] = [("SQLite", None, None)]
    if args.postgres:
        url, drop = postgres_schema(args.postgres)
        databases.append(("PostgreSQL", url, drop))
    started = worker_start(args.cold)
    if not args.json:
        print(f"code from {CODE}")
        if started is not None:
            print(f"worker start (as the mail worker starts, in no row): {started * 1000:.0f} ms of CPU")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        print(
            f"{'database':<11} {'mail':<11} {'batch':>5} {'mails':>6} {'seconds':>8} {'mails/s':>8} "
            f"{'CPU ms/mail':>12} {'worker CPU ms/mail':>19} {'SMTP connections':>17}"
        )
    first = 0  # the next mail's number: with --distinct-boards, no board comes back in a later row
    try:
        for label, url, _ in databases:
            app = bench_app(port, url)
            if args.drains:
                run_drains(app, counter, "auto_passed", 5)  # the first drain of a process, and of a kind of mail
                elapsed, cpu, worker, sent, connections = run_drains(app, counter, "auto_passed", args.drains, 5)
                row = {"database": label, "mail": "auto_passed", "batch": "1 a drain", "mails": sent}
                row.update(seconds=elapsed, cpu=cpu, worker=worker, connections=connections, start=started)
                per_drain = f"{label:<11} {sent:>6} one-mail drains, worker CPU {worker / sent * 1000:.2f} ms each"
                print(json.dumps(row) if args.json else per_drain, flush=True)
                get_engine(app).dispose()
                continue
            for template in [args.only] if args.only else ["auto_passed", "your_turn"]:
                for batch in (100,) if args.only else (100, 1):
                    count = args.mails if batch > 1 else max(1, args.mails // 4)
                    elapsed, cpu, worker, sent, connections = run(
                        app, counter, template, count, batch, args.distinct_boards, first
                    )
                    first += count
                    if args.json:
                        row = {"database": label, "mail": template, "batch": batch, "mails": sent}
                        row.update(seconds=elapsed, cpu=cpu, worker=worker, connections=connections, start=started)
                        print(json.dumps(row), flush=True)
                        continue
                    print(
                        f"{label:<11} {template:<11} {batch:>5} {sent:>6} {elapsed:>8.2f} "
                        f"{sent / elapsed:>8.0f} {cpu / sent * 1000:>12.1f} {worker / sent * 1000:>19.2f} "
                        f"{connections:>17}"
                    )
            get_engine(app).dispose()
    finally:
        controller.stop()
        for _, _, drop in databases:
            if drop:
                drop()


def compare(args: argparse.Namespace) -> None:
    """This bench on the reference tree's code and on this tree's, in turn, ``--runs`` times each: worker CPU
    per "your turn" mail (batches of 100) and mails per second of one worker core, and the ratio."""
    trees = {"reference": str(Path(args.reference).resolve()), "this tree": str(HERE)}
    common = ["--only", args.only or "your_turn", "--mails", str(args.mails), "--json"]
    if args.drains:
        common += ["--drains", str(args.drains)]
    if args.distinct_boards:
        common.append("--distinct-boards")
    if args.cold:
        common.append("--cold")
    if args.postgres:
        common += ["--postgres", args.postgres]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"reference: {trees['reference']}\nthis tree: {trees['this tree']}")
    print("worker start: the CPU time of what the tree's mail worker does as it starts, before the rows (in none)")
    print(
        f"{'run':>3} {'code':<10} {'database':<11} {'mails':>6} {'wall mails/s':>13} {'worker CPU ms/mail':>19} "
        f"{'worker start ms':>16}"
    )
    results: dict[tuple[str, str], list[float]] = {}
    for number in range(1, args.runs + 1):
        for name, tree in trees.items():
            command = [sys.executable, __file__, "--code", tree, *common]
            out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=tree).stdout
            for line in out.splitlines():
                row = json.loads(line)
                per_mail = row["worker"] / row["mails"] * 1000
                results.setdefault((row["database"], name), []).append(per_mail)
                start = "none" if row.get("start") is None else f"{row['start'] * 1000:.0f}"
                print(
                    f"{number:>3} {name:<10} {row['database']:<11} {row['mails']:>6} "
                    f"{row['mails'] / row['seconds']:>13.0f} {per_mail:>19.2f} {start:>16}"
                )
    for database in dict.fromkeys(d for d, _ in results):
        old = statistics.median(results[(database, "reference")])
        new = statistics.median(results[(database, "this tree")])
        print(
            f"{database}: median worker CPU per mail {old:.2f} ms (reference) and {new:.2f} ms (this tree): "
            f"{1000 / old:.0f} and {1000 / new:.0f} mails/s per worker core, {old / new:.2f}x"
        )


if __name__ == "__main__":
    main()
