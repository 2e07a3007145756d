"""A database session per test, rolled back at the end, on SQLite and on PostgreSQL.

The session joins an outer transaction with ``join_transaction_mode="create_savepoint"``: the domain
operations' own ``commit()`` only releases a savepoint, and everything is undone when the test ends
(SQLAlchemy's recipe for "joining a session into an external transaction").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session

from service.domain.links import LinkMaker, signer_for
from service.infra.db import make_engine
from tests import factories
from tests.conftest import migrate


@pytest.fixture(scope="module")
def _sqlite_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    path: Path = tmp_path_factory.mktemp("db") / "domain.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    if request.param == "sqlite":
        yield request.getfixturevalue("_sqlite_engine")
        return
    engine = make_engine(request.getfixturevalue("postgres_url"))
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def db_session(engine: Engine) -> Iterator[Session]:
    connection = engine.connect()
    outer = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint")
    factories._current.append(session)
    try:
        yield session
    finally:
        factories._current.remove(session)
        session.close()
        outer.rollback()
        connection.close()


@pytest.fixture
def links() -> LinkMaker:
    return LinkMaker(signer_for("domain-test-key"), "https://smallworld.example")
