"""service.domain.delivery on PostgreSQL: the lock that keeps a live drain's rows is its process's, taken once.

A worker process takes its advisory lock at its first drain and keeps it, on a connection of its own, for its
life: a drain of one mail pays no round trip for it. A forked child takes its own; a lost connection is
replaced, and the lock taken again, before the next claim; drains in several threads share it; and rows named
by a drain of the first format (each drain a lock of its own) are judged as before.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from emails.delivery import backend_from_config
from service.domain import delivery
from service.domain.models import OutboxMail, utcnow
from service.drain import leases
from service.drain.queue import DrainReport
from service.infra.db import get_engine, get_session
from tests.smtp import Received, SMTPServer

from .conftest import outbox
from .test_outbox_delivery import queue


@pytest.fixture
def other(pg_mail_app: Flask) -> Iterator[sa.Connection]:
    """A connection of its own to the app's database, standing for another process."""
    engine = sa.create_engine(get_engine(pg_mail_app).url)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        yield connection
    engine.dispose()


def run_drain(app: Flask, **values: Any) -> DrainReport:
    with app.app_context():
        settings = delivery.MailSettings(**{**delivery.MailSettings.from_config(app.config).__dict__, **values})
        return delivery.deliver_due_mail(
            get_session(), backend_from_config(app.config), app.extensions["smallworld.links"], settings
        )


def process_lock(app: Flask) -> leases.ProcessLock:
    return leases.ProcessLock.of(get_engine(app))


def held_elsewhere(other: sa.Connection, name: str) -> bool:
    """Whether a session other than ``other``'s holds the advisory lock ``name`` (it is left as it was)."""
    key = sa.func.hashtext(name)
    if other.execute(sa.select(sa.func.pg_try_advisory_lock(leases.DRAIN_LOCKS, key))).scalar():
        other.execute(sa.select(sa.func.pg_advisory_unlock(leases.DRAIN_LOCKS, key)))
        return False
    return True


def after_a_first_drain(app: Flask) -> leases.ProcessLock:
    """The process's lock, once a drain of one mail took it."""
    queue(app, 1, template="auto_passed")
    assert run_drain(app).sent == 1
    lock = process_lock(app)
    assert lock.connection is not None
    return lock


def wait_until_free(other: sa.Connection, name: str, what: str) -> None:
    deadline = time.monotonic() + 5
    while held_elsewhere(other, name):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def statements_of(app: Flask, action: Callable[[], Any]) -> list[str]:
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    engine = get_engine(app)
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        action()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    return sent


def test_a_process_takes_its_lock_at_its_first_drain_and_a_drain_of_one_mail_then_pays_no_statement_for_it(
    pg_mail_app: Flask, other: sa.Connection
) -> None:
    queue(pg_mail_app, 1, template="auto_passed")
    first = statements_of(pg_mail_app, lambda: run_drain(pg_mail_app))
    assert sum("pg_try_advisory_lock" in s for s in first) == 1
    lock = process_lock(pg_mail_app)
    assert held_elsewhere(other, lock.name)

    queue(pg_mail_app, 1, template="auto_passed", email="bob@example.org")
    second = statements_of(pg_mail_app, lambda: run_drain(pg_mail_app))
    assert not [s for s in second if "pg_try_advisory_lock" in s or "advisory_unlock" in s or "set_config" in s]
    assert held_elsewhere(other, lock.name)  # kept between drains, for the process's life
    # Each drain had a name of its own under the process's lock.
    assert [m.status for m in outbox(pg_mail_app)] == ["sent", "sent"]
    assert leases.drain_id(lock.name).rpartition(":")[0] == lock.name


def test_a_drain_takes_the_lock_again_on_a_new_connection_before_it_claims_after_the_connection_was_lost(
    pg_mail_app: Flask, other: sa.Connection
) -> None:
    lock = after_a_first_drain(pg_mail_app)
    assert lock.connection is not None
    backend = lock.connection.execute(sa.select(sa.func.pg_backend_pid())).scalar()
    other.execute(sa.select(sa.func.pg_terminate_backend(backend)))  # as a database restart would end it
    wait_until_free(other, lock.name, "the lock outlived its connection")

    queue(pg_mail_app, 1, template="auto_passed", email="bob@example.org")
    claims_under_lock: list[bool] = []

    def at_claim(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().startswith("WITH due"):
            claims_under_lock.append(held_elsewhere(other, lock.name))

    sa.event.listen(get_engine(pg_mail_app), "before_cursor_execute", at_claim)
    try:
        assert run_drain(pg_mail_app).sent == 1
    finally:
        sa.event.remove(get_engine(pg_mail_app), "before_cursor_execute", at_claim)
    assert claims_under_lock and all(claims_under_lock)
    assert lock.connection is not None
    assert lock.connection.execute(sa.select(sa.func.pg_backend_pid())).scalar() != backend


def _drain_in_child(app: Flask, names: Any) -> None:
    # As Celery's prefork pool starts a process (service.infra.celery: ``worker_process_init``).
    get_engine(app).dispose(close=False)
    lock = process_lock(app)
    # The child has a lock of its own: not the parent's name, nor its connection.
    names.put((lock.name, lock.connection is None, run_drain(app).sent))


def test_a_forked_child_takes_a_lock_of_its_own_and_leaves_the_parents_connection_alone(
    pg_mail_app: Flask, other: sa.Connection
) -> None:
    parent = after_a_first_drain(pg_mail_app)
    assert held_elsewhere(other, parent.name)

    queue(pg_mail_app, 2, template="auto_passed", email="bob@example.org")
    context = multiprocessing.get_context("fork")
    names = context.Queue()
    child = context.Process(target=_drain_in_child, args=(pg_mail_app, names))
    child.start()
    name, fresh, sent = names.get(timeout=30)
    child.join(30)
    assert child.exitcode == 0
    assert name != parent.name and fresh and sent == 2

    # The parent's connection still stands, and holds its lock; the child's lock went with the child.
    assert process_lock(pg_mail_app) is parent and held_elsewhere(other, parent.name)
    # The server ends the child's session when it reads the closed socket, a moment after the child exits.
    wait_until_free(other, name, "the child's lock outlived the child")
    queue(pg_mail_app, 1, template="auto_passed", email="cy@example.org")
    statements = statements_of(pg_mail_app, lambda: run_drain(pg_mail_app))
    assert not [s for s in statements if "pg_try_advisory_lock" in s]
    assert [m.status for m in outbox(pg_mail_app)] == ["sent"] * 4


def test_drains_in_several_threads_share_the_lock_and_its_connection_and_each_mail_goes_out_once(
    pg_mail_app: Flask, other: sa.Connection
) -> None:
    queue(pg_mail_app, 6, template="auto_passed")

    def slow_server(_mail: Received) -> None:
        time.sleep(0.3)  # longer than a quarter of the lease: the drains' renewals meet on the connection

    smtp: SMTPServer = pg_mail_app.extensions["test.smtp"]
    smtp.mailbox.on_accept = slow_server
    reports: list[DrainReport] = []
    start = threading.Barrier(3)

    def drain() -> None:
        start.wait()
        reports.append(run_drain(pg_mail_app, lease_seconds=0.8, batch_size=2))

    threads = [threading.Thread(target=drain) for _ in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        smtp.mailbox.on_accept = None
    assert sum(r.sent for r in reports) == 6 and sum(r.lost for r in reports) == 0, reports
    ids = [r.header("Message-ID") for r in smtp.mailbox.all()]
    assert len(ids) == len(set(ids)) == 6
    assert [(m.status, m.attempts, m.claimed_by) for m in outbox(pg_mail_app)] == [("sent", 1, None)] * 6
    assert held_elsewhere(other, process_lock(pg_mail_app).name) and not process_lock(pg_mail_app).drains


@pytest.mark.parametrize(
    "holder",
    [
        "old-host:4242:0a1b2c3d",  # the first format: each drain a lock of its own
        "new-host:4242:0a1b2c3d:4e5f6a7b",  # a drain under its process's lock
    ],
)
def test_a_lapsed_lease_is_taken_over_only_once_no_lock_of_its_holder_is_held(
    pg_mail_app: Flask, other: sa.Connection, holder: str
) -> None:
    queue(pg_mail_app, 1, template="auto_passed")
    lapsed = utcnow() - timedelta(seconds=1)
    with pg_mail_app.app_context():
        session = get_session()
        session.execute(sa.update(OutboxMail).values(claimed_by=holder, next_attempt_at=lapsed, attempts=1))
        session.commit()
    # The lock its holder holds while it lives: its own (first format), or its process's.
    lock = holder if holder.startswith("old-") else holder.rpartition(":")[0]
    key = sa.func.hashtext(lock)
    assert other.execute(sa.select(sa.func.pg_try_advisory_lock(leases.DRAIN_LOCKS, key))).scalar()
    assert run_drain(pg_mail_app).claimed == 0  # alive: left alone, however long ago its lease lapsed
    assert [m.claimed_by for m in outbox(pg_mail_app)] == [holder]
    other.execute(sa.select(sa.func.pg_advisory_unlock(leases.DRAIN_LOCKS, key)))
    assert run_drain(pg_mail_app).sent == 1  # gone: taken over
    assert [(m.status, m.attempts) for m in outbox(pg_mail_app)] == [("sent", 2)]


def test_the_rows_of_a_drain_of_this_process_that_ended_are_taken_over_once_its_lease_lapsed(
    pg_mail_app: Flask,
) -> None:
    # The process lives on, and holds its lock; the drain that claimed the row failed and ended.
    queue(pg_mail_app, 1, template="auto_passed")
    lock = process_lock(pg_mail_app)
    ended, running = leases.drain_id(lock.name), leases.drain_id(lock.name)
    lock.drains.add(running)
    try:
        lapsed = utcnow() - timedelta(seconds=1)
        with pg_mail_app.app_context():
            session = get_session()
            session.execute(sa.update(OutboxMail).values(claimed_by=running, next_attempt_at=lapsed))
            session.commit()
        run_drain(pg_mail_app)  # takes the process's lock if no drain took it yet
        assert [m.claimed_by for m in outbox(pg_mail_app)] == [running]  # a drain of this process that runs
        with pg_mail_app.app_context():
            session = get_session()
            session.execute(sa.update(OutboxMail).values(claimed_by=ended, next_attempt_at=lapsed))
            session.commit()
        assert run_drain(pg_mail_app).sent == 1
    finally:
        lock.drains.discard(running)


def test_disposing_the_engine_gives_the_lock_up_and_the_next_drain_takes_a_new_one(
    pg_mail_app: Flask, other: sa.Connection
) -> None:
    before = after_a_first_drain(pg_mail_app)
    get_engine(pg_mail_app).dispose()  # as a test's end, or a process that closes its connections, does
    wait_until_free(other, before.name, "the lock outlived its engine's disposal")
    queue(pg_mail_app, 1, template="auto_passed", email="bob@example.org")
    assert run_drain(pg_mail_app).sent == 1
    after = process_lock(pg_mail_app)
    assert after is not before and held_elsewhere(other, after.name)
