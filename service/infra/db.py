"""The database: one engine per app, one session per app context, and the migrations.

A web request and a Celery task both run inside a Flask app context (the worker's task class
pushes one), so both get their session from :func:`get_session` and both find it closed for
them when the context ends. Domain operations commit explicitly.
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask, current_app, g, jsonify, render_template, request
from sqlalchemy import DateTime, Engine, String, TypeDecorator, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import InterfaceError, InvalidatePoolError, OperationalError
from sqlmodel import Session, create_engine

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

MIGRATIONS = Path(__file__).parent / "migrations"

#: Seconds a client is asked to wait (``Retry-After``) when the database could not be reached mid-request.
RETRY_AFTER_SECONDS = 5

_EXTENSION = "smallworld.db"


def init_app(app: Flask) -> None:
    """Create the app's engine and close each context's session when the context ends."""
    app.extensions[_EXTENSION] = make_engine(app.config["DATABASE_URL"])
    app.teardown_appcontext(_close_session)
    app.register_error_handler(OperationalError, _database_unavailable)
    app.register_error_handler(InterfaceError, _database_unavailable)


def make_engine(url: str) -> Engine:
    """An engine for ``url``, tuned for SQLite shared by several processes when it is SQLite."""
    connect_args: dict[str, Any] = {}
    if url.startswith("postgresql"):
        # Fail fast when the server is unreachable, so /health answers instead of hanging.
        connect_args["connect_timeout"] = 5
    # PostgreSQL's connections are checked at checkout by check_pooled_connections, SQLite's by the pool's ping.
    engine = create_engine(url, connect_args=connect_args, pool_pre_ping=not url.startswith("postgresql"))
    if engine.dialect.name == "postgresql":
        check_pooled_connections(engine)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _tune_sqlite_connection)
        event.listen(engine, "begin", _begin_immediate)
    return engine


#: A pooled connection last used less than this many seconds ago is handed out without a round trip when its
#: socket has nothing to read (:func:`check_pooled_connections`).
PING_AFTER_IDLE_SECONDS = 5.0
#: When the connection was last used: its ``connect``, then each ``checkin`` (in the connection's ``info``, which
#: SQLAlchemy clears when it closes or invalidates the connection).
_USED_AT = "smallworld.used_at"


def check_pooled_connections(engine: Engine) -> None:
    """Check each connection ``engine``'s pool hands out, as ``pool_pre_ping`` does, a round trip less most of the time.

    The pool's pre-ping sends ``SELECT 1`` at every checkout (60 µs of a request's CPU), so that a connection the
    database closed while it sat in the pool (a restart, a failover, ``pg_terminate_backend``) is replaced before
    the request uses it, instead of failing the request. A server that closes a connection says so on its socket
    (PostgreSQL sends the reason, then closes): the socket has something to read, which a ``poll`` sees without
    a round trip. So a connection used in the last :data:`PING_AFTER_IDLE_SECONDS` whose socket is quiet is handed
    out as it is; any other (idle longer, or with something to read) is pinged as the pre-ping does, and when the
    ping finds it gone, every connection of the pool older than it is replaced, as after a failed pre-ping. What
    only the ping would find is a connection lost without a word (a firewall dropping idle connections, a server
    gone with its network): that takes idle time, which the ping after :data:`PING_AFTER_IDLE_SECONDS` covers.
    """
    dialect = engine.dialect

    def used(dbapi_connection: Any, record: Any) -> None:
        if dbapi_connection is not None:  # None: invalidated, its next checkout connects again
            record.info[_USED_AT] = time.monotonic()

    def check(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        used_at = record.info.get(_USED_AT)
        recent = used_at is not None and time.monotonic() - used_at < PING_AFTER_IDLE_SECONDS
        if recent and not server_spoke(dbapi_connection):
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if dialect.is_disconnect(error, dbapi_connection, None):
                raise InvalidatePoolError() from error  # as the pre-ping: this one and all older ones replaced
            raise

    event.listen(engine, "connect", used)
    event.listen(engine, "checkin", used)
    event.listen(engine, "checkout", check)


def server_spoke(dbapi_connection: Any) -> bool:
    """Whether an idle connection's socket has something to read: a server that ends a connection says why
    first (:func:`check_pooled_connections`). True too for a connection with no socket to look at (closed)."""
    try:
        fileno = dbapi_connection.fileno()
    except Exception:  # closed, or a driver without sockets
        return True
    ready = select.poll()
    ready.register(fileno, select.POLLIN)
    return bool(ready.poll(0))


#: The dialects' own INSERT, which has ``ON CONFLICT`` (both spell it the same).
_INSERTS: dict[str, Callable[[Any], postgresql.Insert | sqlite.Insert]] = {
    "postgresql": postgresql.insert,
    "sqlite": sqlite.insert,
}


def dialect_insert(dialect: str, table: Any) -> postgresql.Insert | sqlite.Insert:
    """``table``'s (a table or a model) INSERT in ``dialect`` (a dialect's name), with ``on_conflict_do_nothing``."""
    return _INSERTS[dialect](table)


def _begin_immediate(connection: Any) -> None:
    # SQLAlchemy's recipe for pysqlite, which otherwise defers BEGIN and breaks SAVEPOINTs. IMMEDIATE
    # takes the write lock up front: a transaction that reads a game then writes it can then never
    # fail on lock upgrade (SQLITE_BUSY_SNAPSHOT) when two steps race; it waits (busy_timeout) instead.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _tune_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    # The embedded mode has a web server, a worker and beat on one SQLite file: WAL lets readers
    # go on while one process writes, and the busy timeout makes a writer wait for the lock
    # instead of failing at once.
    dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (_begin_immediate)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def get_engine(app: Flask | None = None) -> Engine:
    """The engine of ``app`` (default: the current app)."""
    engine: Engine = (app or current_app).extensions[_EXTENSION]
    return engine


def get_session() -> Session:
    """The session of the current app context, opened on first use."""
    if "db_session" not in g:
        # Objects stay readable after commit: a request commits, then renders what it committed, without
        # reloading every row it touched (each reload is a database round trip).
        g.db_session = Session(get_engine(), expire_on_commit=False)
    session: Session = g.db_session
    return session


def get_reading_session() -> Session:
    """:func:`get_session` for a request whose only database work is one read (a link's game and seat for the
    legal actions, say): on PostgreSQL its connection runs that read outside a transaction (autocommit), as a
    transaction of that one statement would run it, which is what the read needs.

    The transaction's BEGIN and the ROLLBACK that ends it are then not sent, and neither is the ``DEALLOCATE ALL``
    that psycopg sends after every ROLLBACK, with which it forgets the connection's prepared statements: a
    pooled connection's next requests (the steps' statements, read and written at every step) are then
    prepared again, one more round trip each, after five runs parsed and planned anew. A request that reads
    twice or writes takes :func:`get_session`: each statement of an autocommit connection sees its own
    snapshot. SQLite's sessions are unchanged (its transactions begin as ``BEGIN IMMEDIATE``).
    """
    session = get_session()
    if not session.in_transaction() and get_engine().dialect.name == "postgresql":
        # The isolation level is the connection's until the pool takes it back (SQLAlchemy resets it then).
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    return session


def _database_unavailable(error: OperationalError | InterfaceError) -> Any:
    """The database went away mid-request (a restart, a failover, a dropped connection; SQLite busy past its
    timeout): the request's transaction was not committed, so the client may safely send it again. 503 with
    ``Retry-After``, not 500: the request was fine, the service is briefly unavailable. A step sent again
    with its idempotency key applies once (``service.domain.play``)."""
    current_app.logger.warning("database unavailable mid-request: %s", error.orig or error)
    message = "The game's database is briefly unavailable; nothing was changed. Try again in a few seconds."
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if request.path.startswith("/api/"):
        return jsonify({"error": message}), 503, headers
    return render_template("refused.html", heading="Briefly unavailable", message=message), 503, headers


def _close_session(_exception: BaseException | None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every database.

    PostgreSQL keeps the offset (``timestamptz``); SQLite keeps none, so naive values read back
    are UTC by construction and get their ``tzinfo`` again. Naive values are refused on the way
    in: a deadline with no time zone is a bug waiting for a daylight-saving change.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"refusing to store a naive datetime ({value!r}); give it a tzinfo")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class EnumString(TypeDecorator[str]):
    """A :class:`~enum.StrEnum` stored as its plain string (``VARCHAR(length)``), not as a database enum
    type: the stored strings are those of the text columns it replaced, and a new member needs no
    migration. A value that is not a member is refused on the way in (a typo fails the write, instead of
    a query that never matches); values come back as members.
    """

    impl = String
    cache_ok = True

    def __init__(self, enum: type[StrEnum], length: int) -> None:
        super().__init__(length=length)
        self.enum = enum
        self.length = length

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else self.enum(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else self.enum(value)


def alembic_config(engine: Engine) -> AlembicConfig:
    """An Alembic configuration whose migrations run on ``engine`` (no alembic.ini needed).

    Alembic is imported here, not with this module: only migrating needs it, and the service's processes
    that do not migrate (web workers, Celery worker and beat) then start without loading it."""
    from alembic.config import Config as AlembicConfig

    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    # Date first, so the folder lists migrations in the order they were written.
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    config.attributes["engine"] = engine
    return config


def upgrade_database(engine: Engine, revision: str = "head") -> None:
    """Bring the schema of ``engine``'s database up to ``revision``, creating it on first run."""
    from alembic import command

    command.upgrade(alembic_config(engine), revision)
