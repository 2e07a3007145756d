"""Delivery through the embedded broker with several worker processes: exactly once, and how fast.

    python bench/embedded_broker.py [--tasks N] [--workers W]

Starts W ``smallworld worker`` processes (two pool processes each) on a fresh instance folder with
the default configuration, sends N tasks that each append a row to a SQLite log, waits for them and
prints: tasks sent per second, tasks done per second, and how many ran zero, one or several times.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from celery import shared_task
from flask import current_app

BENCH = Path(__file__).resolve().parent
SMALLWORLD = str(Path(sys.executable).parent / "smallworld")


def log_path(instance: str) -> Path:
    return Path(instance) / "bench-log.sqlite"


@shared_task(name="bench.embedded_broker.record")
def record(tag: int) -> None:
    """Append ``tag`` to the log (runs in the worker, inside the Flask app context)."""
    connection = sqlite3.connect(log_path(current_app.config["INSTANCE_PATH"]), timeout=30)
    with closing(connection), connection:  # closes, after committing
        connection.execute("INSERT INTO log (tag, pid) VALUES (?, ?)", (tag, os.getpid()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from service import create_app
    from service.infra.broker import prepare_embedded_broker

    instance = tempfile.mkdtemp(prefix="smallworld-bench-")
    app = create_app({"INSTANCE_PATH": instance})
    prepare_embedded_broker(app.extensions["celery"])
    with closing(sqlite3.connect(log_path(instance))) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE log (tag INTEGER, pid INTEGER)")

    env = {name: value for name, value in os.environ.items() if not name.startswith("SMALLWORLD_")}
    env.update(SMALLWORLD_INSTANCE_PATH=instance, PYTHONPATH=str(BENCH))
    workers = [
        subprocess.Popen(
            [
                SMALLWORLD,
                "worker",
                "--concurrency",
                "2",
                "--loglevel",
                "WARNING",
                "--include",
                "embedded_broker",
                "--hostname",
                f"bench{n}@%h",
            ],
            env=env,
            start_new_session=True,
        )
        for n in range(args.workers)
    ]
    try:
        time.sleep(5)  # let every worker start polling
        started = time.monotonic()
        with app.app_context():
            for tag in range(args.tasks):
                record.delay(tag)
        sent = time.monotonic() - started
        with closing(sqlite3.connect(log_path(instance))) as connection:
            while connection.execute("SELECT COUNT(DISTINCT tag) FROM log").fetchone()[0] < args.tasks:
                if time.monotonic() - started > 300:
                    break
                time.sleep(0.2)
            done = time.monotonic() - started
            time.sleep(3)  # a duplicate would show up by now
            runs = dict(connection.execute("SELECT tag, COUNT(*) FROM log GROUP BY tag").fetchall())
            pids = connection.execute("SELECT COUNT(DISTINCT pid) FROM log").fetchone()[0]
    finally:
        for process in workers:
            process.terminate()
        for process in workers:
            process.wait(timeout=60)
        shutil.rmtree(instance)

    never = args.tasks - len(runs)
    once = sum(1 for count in runs.values() if count == 1)
    more = sum(1 for count in runs.values() if count > 1)
    print(f"{args.tasks} tasks, {args.workers} worker processes ({pids} pool processes ran tasks)")
    print(f"sent: {args.tasks / sent:8.0f} tasks/s")
    print(f"done: {args.tasks / done:8.0f} tasks/s (send to last run)")
    print(f"ran never: {never}, once: {once}, more than once: {more}")
    sys.exit(0 if once == args.tasks else 1)


if __name__ == "__main__":
    main()
