"""Leases that a live drain keeps (ARCHITECTURE §6): how a drain (``service.drain.queue``, that of the outbox and
that of the chat notices) holds the rows it claimed.

A drain **claims** rows before it sends them: it names itself in each (``claimed_by``) and moves its
``next_attempt_at`` to the end of a short lease, which it **renews** while it sends (:class:`Lease`, a timer
thread). A drain that dies stops renewing, and its rows are due again one lease later.

A lease that lapsed is taken over only from a drain that is **gone**, not from one that lives but was kept from
the CPU (a renewal thread that got no CPU in time once let a second drain send a mail that the first was still
sending). Each drain is under a lock for as long as it runs (:class:`DrainLock`), one the operating system or
the database gives up the moment its process dies: on PostgreSQL a session advisory lock that its worker process
takes at its first drain and holds for its life, on a connection it keeps, which renews the leases of its
drains (:class:`ProcessLock`; the server drops the lock when the connection closes); a drain's name is its
process's lock's name and a random part, so a drain of one row pays no round trip for the lock. The drains of
mail and of chat notices in one process share that lock and its connection. On SQLite (one machine) each drain
holds an ``flock`` on a file of its own beside the database. A claim takes a row whose lease lapsed only if it
can take its holder's lock (:func:`takeable`), that is, if the holder is gone; or, for a drain of the claiming
process itself, if that drain has ended (it failed, its process lives on). A drain whose renewal is late asks
the database, with one guarded ``UPDATE``, whether a row is still its own before it sends it
(:meth:`Lease.holds`). A drain that fails while its process lives on gives back the rows it had not begun
(:meth:`Lease.give_back_after_failure`): no other process's drain could take them while that process lives.

So no time limit, and no thread being on time, decides whether a live drain keeps its rows: after a crash a row
goes out again one lease later (at least once), without a crash never twice. The lease's time is what is left
for a drain whose lock was lost while it lives (the connection to PostgreSQL broken: the process takes its lock
again, on a new connection, at the next drain or renewal), and for a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import re
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlmodel import Session

from service.infra.db import server_spoke
from service.infra.logfmt import log

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Claims:
    """The rows that one kind of drain claims: a table with ``claimed_by``, ``status`` and ``next_attempt_at``."""

    table: sa.Table
    #: The status of a row still to send (the only rows a lease holds).
    pending: str
    #: The first word of the drains' log events: ``mail``, ``chat``.
    events: str

    def held(self) -> sa.Update:
        """An update of one row (parameter ``row_id``) that takes effect only while the drain named ``holder``
        holds it, still pending: after a lease lapsed, the row belongs to the drain that claimed it next."""
        table = self.table
        return sa.update(table).where(
            table.c.id == sa.bindparam("row_id"),
            table.c.status == self.pending,
            table.c.claimed_by == sa.bindparam("holder"),
        )


def drain_id(process: str | None = None) -> str:
    """A name for one drain, unique across hosts and processes: ``process:random``, where ``process`` (by default
    :func:`process_id`) names the lock its process holds, ``host:pid:random``. A holder's process is the part
    before its last ``:``."""
    return f"{process or process_id()}:{secrets.token_hex(4)}"


def process_id() -> str:
    """A name for this process, unique across hosts and processes: ``host:pid:random`` (a new one after a fork)."""
    return _process_id(os.getpid())


def _process_name(pid: int) -> str:
    """A new name for process ``pid``, unique across hosts and processes: ``host:pid:random``."""
    return f"{socket.gethostname()[:60]}:{pid}:{secrets.token_hex(4)}"


_process_id = functools.cache(_process_name)


class Lease:
    """A drain's hold on the rows of its batch (of ``claims``), renewed every quarter of ``seconds`` by a thread
    of its own (on its lock's connection, :class:`DrainLock`), so that a send that takes long (a slow SMTP server,
    a slow chat) keeps the rows while a drain that died loses them within ``seconds``.

    :meth:`holds` says whether a row may be sent: its lease was renewed (or claimed) less than ``seconds``
    minus a margin ago (the margin covers the time the renewal took and clocks a little apart), and the
    last renewal found the row still ours. Past that, the drain asks the database itself before it sends
    (:meth:`confirm`): a row still ours then, while the drain holds its lock, is nobody else's to take
    however long the send takes. ``writing`` serialises the renewals with the batch's own writes
    (outcomes, releases), which touch the same rows: on PostgreSQL two transactions updating the same rows
    in different orders could deadlock.
    """

    def __init__(
        self, claims: Claims, alive: DrainLock, ids: list[int], seconds: float, clock: Callable[[], datetime]
    ) -> None:
        self.claims = claims
        self.alive = alive
        self.holder = alive.holder
        self.seconds = seconds
        self.margin = min(5.0, seconds / 4)
        self.clock = clock
        self.writing = threading.Lock()
        self.held = set(ids)
        # The claim was committed just now, with a lease of ``seconds`` from ``clock()``.
        self.until = time.monotonic() + seconds - self.margin
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{claims.events}-lease-{self.holder}", daemon=True)
        self._failed = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.seconds)

    def holds(self, row_id: int) -> bool:
        if row_id not in self.held:
            return False
        return time.monotonic() < self.until or self.confirm(row_id)

    def confirm(self, row_id: int) -> bool:
        """Whether ``row_id`` is still ours, asked of the database now (the renewal is late: its thread got no
        CPU in time, or the database is slow). Renews the lease of every row of the batch as it asks."""
        locked = self.renew()
        return row_id in self.held and (locked or time.monotonic() < self.until)

    def _run(self) -> None:
        while not self._stop.wait(self.seconds / 4):
            self.renew()

    def write(self, session: Session, statement: sa.Executable, rows: list[dict[str, Any]]) -> None:
        """Run ``statement`` for ``rows`` (the batch's outcomes, a queue's own writes to its held rows) and commit,
        between two renewals."""
        with self.writing:
            try:
                session.execute(statement, rows)
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def give_back(self, session: Session, ids: list[int], now: datetime) -> None:
        """Give back rows claimed but not tried: due again at once, and the attempt not counted."""
        table = self.claims.table
        with self.writing:
            session.execute(
                sa.update(table)
                .where(
                    table.c.id.in_(ids),
                    table.c.status == self.claims.pending,
                    table.c.claimed_by == self.holder,
                )
                .values(next_attempt_at=now, attempts=table.c.attempts - 1, claimed_by=None)
            )
            session.commit()

    def give_back_after_failure(self, session: Session, ids: list[int], now: datetime) -> None:
        """Give back rows not begun when the drain failed with its process living on: no other process's drain
        may take them while that process holds its lock, and a later drain of it only once their lease lapsed.
        If the database will not, their lease's time returns them."""
        if not ids:
            return
        try:
            session.rollback()  # the failure may have left the session's transaction unusable
            self.give_back(session, ids, now)
        except sa.exc.SQLAlchemyError as error:
            session.rollback()
            event = f"{self.claims.events}.not_given_back"
            log(logger, logging.WARNING, event, holder=self.holder, rows=len(ids), error=repr(error))

    def renew(self) -> bool:
        """Renew the lease of the rows still ours; whether it was done under the drain's lock (then nobody
        takes them over while this drain lives, whatever the time)."""
        started = time.monotonic()
        try:
            with self.writing:
                table = self.claims.table
                renew = (
                    sa.update(table)
                    .where(table.c.claimed_by == self.holder, table.c.status == self.claims.pending)
                    .values(next_attempt_at=self.clock() + timedelta(seconds=self.seconds))
                    .returning(table.c.id)
                )
                held, locked = self.alive.execute(renew)
                # Rows whose outcome is stored are no longer pending and drop out; those are not asked about
                # again.
                self.held &= {row[0] for row in held}
        except sa.exc.SQLAlchemyError as error:
            if not self._failed:  # once per batch: the database being away is logged by whoever needs it
                log(
                    logger,
                    logging.WARNING,
                    f"{self.claims.events}.lease_not_renewed",
                    holder=self.holder,
                    error=repr(error),
                )
            self._failed = True
            return False
        self._failed = False
        self.until = started + self.seconds - self.margin
        return locked


#: The first key of the drains' advisory locks on PostgreSQL (``pg_advisory_lock(int, int)``), the second being
#: the hash of the lock's name: "mail" in ASCII (the first drains were mail's), apart from every other lock of the
#: database.
DRAIN_LOCKS = 0x6D61696C


def takeable(dialect: str, holder: Any) -> sa.ColumnElement[bool]:
    """True for a row that no drain holds (``holder``, its ``claimed_by``, is null) or whose holder is gone: with
    its lease lapsed, a claim may take it."""
    return sa.or_(holder.is_(None), holder_gone(dialect, holder))


def holder_gone(dialect: str, holder: Any) -> sa.ColumnElement[bool]:
    """True for a row's holder (a drain's name) that is gone: its lock (:class:`DrainLock`) can be taken.

    On PostgreSQL the lock is its process's (:class:`ProcessLock`), named by the holder's part before its last
    ``:``; a name of the first format (``host:pid:random``, each drain a lock of its own) is under its whole self,
    so both are tested: a holder is gone when neither lock is held. A drain of the claiming process itself is
    gone once it ended (it is not among the ``live`` drains of the ``process``), though its process's lock is
    held. The claim takes a gone holder's locks until it commits: two claims at once cannot both think it gone
    and then take different rows of it."""
    if dialect == "postgresql":
        process = sa.func.regexp_replace(holder, ":[^:]*$", "")
        return sa.or_(
            sa.and_(
                sa.func.pg_try_advisory_xact_lock(DRAIN_LOCKS, sa.func.hashtext(process)),
                sa.func.pg_try_advisory_xact_lock(DRAIN_LOCKS, sa.func.hashtext(holder)),
            ),
            sa.and_(
                process == sa.bindparam("process", None, type_=sa.String),
                holder != sa.all_(sa.bindparam("live", [], type_=postgresql.ARRAY(sa.String))),
            ),
        )
    return sa.func.drain_holder_gone(holder) == 1


class DrainLock:
    """What a drain holds while it lives, given up by the system the moment its process dies, and tested by the
    claims of other drains (:func:`holder_gone`). Renewals run through it (:meth:`execute`)."""

    def __init__(self, engine: sa.Engine, holder: str) -> None:
        self.engine = engine
        self.holder = holder
        #: One statement at a time: the renewals of a batch whose thread outlived it may meet the next one's.
        self.using = threading.Lock()
        self.released = False

    @staticmethod
    def of(engine: sa.Engine, holder: str | None = None) -> DrainLock:
        if engine.dialect.name == "postgresql":
            return _AdvisoryDrainLock(engine, holder)
        return _FileDrainLock(engine, holder or drain_id())

    def claim_parameters(self, session: Session) -> dict[str, Any]:
        """The parameters of a claim in ``session`` that say which drains are this one's process's and still run
        (:func:`holder_gone`)."""
        return {}

    def execute(self, statement: sa.Executable) -> tuple[list[sa.Row[Any]], bool]:
        """Run and commit ``statement``; its rows, and whether the lock was held all the while. Once the lock is
        released (the drain is over), nothing: a late renewal renews no row."""
        with self.using:
            if self.released:
                return [], False
            return self._execute(statement)

    def _execute(self, statement: sa.Executable) -> tuple[list[sa.Row[Any]], bool]:
        with self.engine.begin() as connection:
            return list(connection.execute(statement)), True

    def release(self) -> None:
        with self.using:
            self.released = True
            self._release()

    def _release(self) -> None:
        pass


#: TCP keepalives of the server's side of a process's lock connection: a peer silent for 10 s is probed every 5 s,
#: and given up after 3 probes unanswered (no effect on a Unix socket, which ends with its machine).
_KEEPALIVES = sa.select(
    *(
        sa.func.set_config(name, value, False)
        for name, value in (
            ("tcp_keepalives_idle", "10"),
            ("tcp_keepalives_interval", "5"),
            ("tcp_keepalives_count", "3"),
        )
    )
)
#: A process's lock taken (parameter: ``name``), once for the life of its connection.
_TAKE = sa.select(sa.func.pg_try_advisory_lock(DRAIN_LOCKS, sa.func.hashtext(sa.bindparam("name"))))


class _AdvisoryDrainLock(DrainLock):
    """A drain on PostgreSQL: its process's lock (:class:`ProcessLock`) held, its name under the lock's, and its
    renewals run on the lock's connection. Taking and giving it up costs no round trip, only when the process's
    lock must be taken (its first drain, or its connection lost)."""

    def __init__(self, engine: sa.Engine, holder: str | None) -> None:
        self.process = ProcessLock.of(engine)
        super().__init__(engine, holder or drain_id(self.process.name))
        #: Whether the lock that protects this drain's rows is its process's (not so for a name given by hand).
        self.under = self.holder.rpartition(":")[0] == self.process.name
        # The database away: the claim fails too; else the renewals try again.
        with contextlib.suppress(sa.exc.SQLAlchemyError):
            self.process.begin(self.holder)

    def claim_parameters(self, session: Session) -> dict[str, Any]:
        return {"process": self.process.name, "live": self.process.live()}

    def _execute(self, statement: sa.Executable) -> tuple[list[sa.Row[Any]], bool]:
        rows, locked = self.process.execute(statement)
        return rows, locked and self.under

    def _release(self) -> None:
        self.process.end(self.holder)


class ProcessLock:
    """A session advisory lock of PostgreSQL that a process holds for its life, for one engine, on a connection it
    keeps out of the pool's turns: the server gives it up when that connection ends, with the process or
    otherwise. Taken at the process's first drain, and again, on a new connection, at the first drain or renewal
    after its connection was lost (a database restart); in that gap the lease's time alone protects the rows.
    The drains of every thread share it, one statement at a time. It needs a server session of its own: a proxy
    pooling connections by transaction (PgBouncer's ``pool_mode = transaction``) cannot carry it.

    A child forked from a process that held it neither uses the parent's connection nor believes it holds the
    lock (:func:`_forget_inherited_locks`): it takes its own, under its own name.
    """

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.pid = os.getpid()
        #: ``host:pid:random``: the part of the name of each of its drains before the last ``:``.
        self.name = _process_name(self.pid)
        self.using = threading.Lock()
        self.connection: sa.Connection | None = None
        #: Whether ``connection`` holds the lock (not so in the one case in four billion where a live process's
        #: name hashes alike, nor for a moment while a claim tests it: taken again at the next drain).
        self.locked = False
        #: The names of this process's drains running now: a claim in this process takes over the others' rows.
        self.drains: set[str] = set()
        self.counting = threading.Lock()
        #: Its engine was disposed: a drain still running (another thread) is left its lease's time alone, and
        #: the next drain takes a new lock.
        self.closed = False

    @staticmethod
    def of(engine: sa.Engine) -> ProcessLock:
        with _PROCESS_LOCKS_GUARD:
            lock = _PROCESS_LOCKS.get(id(engine))
            if lock is None or lock.engine is not engine or lock.pid != os.getpid():
                lock = _PROCESS_LOCKS[id(engine)] = ProcessLock(engine)
                if not sa.event.contains(engine, "engine_disposed", _forget_engine):
                    sa.event.listen(engine, "engine_disposed", _forget_engine)
            return lock

    def begin(self, holder: str) -> None:
        """A drain starts: its lock held (no round trip while the connection stands and holds it)."""
        with self.counting:
            self.drains.add(holder)
        with self.using:
            self._connect()

    def end(self, holder: str) -> None:
        with self.counting:
            self.drains.discard(holder)

    def live(self) -> list[str]:
        with self.counting:
            return list(self.drains)

    def execute(self, statement: sa.Executable) -> tuple[list[sa.Row[Any]], bool]:
        with self.using:
            connection = self._connect()
            try:
                rows = list(connection.execute(statement))
            except BaseException:
                # The lock may be gone with the connection: taken again, on a new one, before the next statement.
                self._drop()
                raise
            return rows, self.locked

    def _connect(self) -> sa.Connection:
        if self.closed:
            raise sa.exc.ResourceClosedError("the engine of this drain's lock was disposed")
        connection = self.connection
        if connection is not None and _told_something(connection):
            # A server that closes a connection (a restart, ``pg_terminate_backend``) says so first: the lock is
            # gone, or going. Seen without a round trip; a connection lost without a word is found by its next
            # renewal.
            self._drop()
            connection = None
        if connection is None:
            # Each statement its own transaction: no BEGIN and COMMIT around a renewal.
            connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            try:
                # The server notices within half a minute that a machine it talks to went away (its default,
                # the system's, is two hours), and so gives up the lock of a process whose machine died.
                if not connection.info.get("smallworld.keepalives"):  # they last as long as the connection
                    connection.execute(_KEEPALIVES)
                    connection.info["smallworld.keepalives"] = True
            except BaseException:
                connection.invalidate()
                connection.close()
                raise
            self.connection, self.locked = connection, False
        if not self.locked:
            try:
                self.locked = bool(connection.execute(_TAKE, {"name": self.name}).scalar())
            except BaseException:
                self._drop()
                raise
            if not self.locked:
                log(logger, logging.WARNING, "drain.lock_shared", holder=self.name)
        return connection

    def _drop(self) -> None:
        """Close the connection (the server gives the lock up with it)."""
        connection, self.connection, self.locked = self.connection, None, False
        if connection is not None:
            with contextlib.suppress(sa.exc.SQLAlchemyError):
                connection.invalidate()
            connection.close()


def _told_something(connection: sa.Connection) -> bool:
    """Whether the server sent something on an idle connection (a notice that it closes it), or it is unusable."""
    try:
        driver = connection.connection.driver_connection
    except Exception:  # closed, or invalidated
        return True
    return server_spoke(driver)


#: This process's locks, by engine (``id``, the engine checked too).
_PROCESS_LOCKS: dict[int, ProcessLock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()
#: Locks a forked child inherited from its parent: kept, never used nor closed (closing would end the parent's
#: session, whose socket the child shares).
_INHERITED: list[ProcessLock] = []


def _forget_engine(engine: sa.Engine) -> None:
    """An engine disposed (its connections closed): its lock given up with its connection, in this process."""
    with _PROCESS_LOCKS_GUARD:
        lock = _PROCESS_LOCKS.get(id(engine))
        if lock is None or lock.engine is not engine or lock.pid != os.getpid():
            return
        del _PROCESS_LOCKS[id(engine)]
    with lock.using:
        lock.closed = True
        lock._drop()


def _forget_inherited_locks() -> None:
    """In a forked child: the parent's locks are not the child's (Celery's prefork pool forks its processes from
    a parent that may have drained)."""
    global _PROCESS_LOCKS_GUARD
    _PROCESS_LOCKS_GUARD = threading.Lock()  # the parent's may have been held by another thread at the fork
    _INHERITED.extend(_PROCESS_LOCKS.values())
    _PROCESS_LOCKS.clear()


os.register_at_fork(after_in_child=_forget_inherited_locks)


class _FileDrainLock(DrainLock):
    """An ``flock`` on a file of the drain's own, in a folder beside the SQLite database (every drain of an
    SQLite database runs on its machine): the kernel gives it up when the process ends, however it ends."""

    def __init__(self, engine: sa.Engine, holder: str) -> None:
        super().__init__(engine, holder)
        self.path = _lock_folder(engine.url.database) / _file_name(holder)
        self.file = open(self.path, "ab")  # noqa: SIM115 (held until release)
        fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _release(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        finally:
            self.file.close()

    def claim_parameters(self, session: Session) -> dict[str, Any]:
        """None; the session's SQLite connection is given the claim's test of a holder (``drain_holder_gone``)."""
        folder = _lock_folder(session.get_bind().engine.url.database)
        driver = session.connection().connection.driver_connection
        driver.create_function("drain_holder_gone", 1, functools.partial(_file_holder_gone, folder))  # type: ignore[union-attr]
        return {}


def _file_holder_gone(folder: Path, holder: str | None) -> int:
    if holder is None:
        return 1
    path = folder / _file_name(holder)
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:  # released, or never taken (a name written by hand)
        return 1
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    else:  # its drain died without releasing it: nobody will ask for this name again
        path.unlink(missing_ok=True)
        return 1
    finally:
        os.close(descriptor)


def _file_name(holder: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", holder) + ".lock"


@functools.cache
def _lock_folder(database: str | None) -> Path:
    """Where the drains of an SQLite database keep their locks: beside it (``<database>.drains``); for a
    database in memory (seen by one process only), a folder of the process's own."""
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        folder = Path(tempfile.mkdtemp(prefix="smallworld-drains-"))
    else:
        folder = Path(f"{database}.drains")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
