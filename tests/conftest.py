"""Fixtures shared by every test: the Flask app, its client and CLI runner, real servers.

PostgreSQL and Redis are real (127.0.0.1, or ``SMALLWORLD_TEST_POSTGRES_URL`` /
``SMALLWORLD_TEST_REDIS_URL``). When one is unreachable its tests are skipped, unless
``SMALLWORLD_REQUIRE_SERVICES=1`` (CI sets it), in which case they fail.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
import redis
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError

from service import create_app
from service.infra.config import DEFAULTS, PREFIX
from service.infra.db import get_engine, upgrade_database
from tests.processes import OwnRedis

REQUIRE_SERVICES = os.environ.get("SMALLWORLD_REQUIRE_SERVICES") == "1"
POSTGRES_URL = os.environ.get("SMALLWORLD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("SMALLWORLD_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
#: How many Redis databases from REDIS_URL's on the tests may take, one test (or module) each: runs in
#: parallel (pytest-xdist, several checkouts) then wait for one another only when all are taken.
REDIS_DATABASES = int(os.environ.get("SMALLWORLD_TEST_REDIS_DATABASES", "6"))

#: The variables the service reads (see service.infra.config), which tests set for themselves.
SERVICE_SETTINGS = {f"{PREFIX}_{name}" for name in [*DEFAULTS, "INSTANCE_PATH"]}


def service_unavailable(message: str) -> NoReturn:
    """Skip the test, or fail it when the servers are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{message} (SMALLWORLD_REQUIRE_SERVICES=1)")
    pytest.skip(message)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's own service settings (a real database!) out of the tests."""
    for name in SERVICE_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    """Build apps with settings on top of a fresh instance folder; upgrade their database."""
    apps: list[Flask] = []

    def make(**settings: Any) -> Flask:
        settings.setdefault("INSTANCE_PATH", str(tmp_path / "instance"))
        # Tests play whole games in seconds from one address; the rate-limit tests turn the limits on.
        settings.setdefault("RATELIMIT_ENABLED", False)
        app = create_app({"TESTING": True, **settings})
        apps.append(app)
        upgrade_database(get_engine(app))
        return app

    yield make
    for app in apps:
        get_engine(app).dispose()


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()


@pytest.fixture
def client(app: Flask) -> Any:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL of the test PostgreSQL database whose search path is a fresh, empty schema, dropped at the end."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    try:
        connection = engine.connect()
    except OperationalError as error:
        engine.dispose()
        service_unavailable(f"PostgreSQL is not reachable at {POSTGRES_URL}: {error.orig}")
    schema = f"test_{uuid.uuid4().hex[:12]}"
    with connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
    url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with engine.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            connection.commit()
        engine.dispose()


@contextlib.contextmanager
def redis_database() -> Iterator[str]:
    """A URL of an empty Redis database that the caller owns until it leaves the block.

    Test runs on one machine (parallel workers, a developer's and CI's) share the server, and their workers
    would take each other's tasks: a lock file per database lets one test (or module) at a time use it. The
    first free one of ``REDIS_DATABASES`` databases from ``REDIS_URL``'s is taken; when every one is taken
    the caller waits for the first.
    """
    base = make_url_redis(REDIS_URL)
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        client.close()
        service_unavailable(f"Redis is not reachable at {REDIS_URL}: {error}")
    client.close()
    with contextlib.ExitStack() as stack:
        url = ""
        for number in range(base.db, base.db + max(REDIS_DATABASES, 1)):
            lock = stack.enter_context(_redis_lock(number).open("w"))
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (fcntl.LOCK_NB if number != base.db + REDIS_DATABASES - 1 else 0))
            except BlockingIOError:
                continue
            url = base.with_db(number)
            break
        client = stack.enter_context(redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3))
        client.flushdb()
        try:
            yield url
        finally:
            client.flushdb()


def _redis_lock(number: int) -> Path:
    name = (
        "smallworld-tests-redis.lock"
        if number == make_url_redis(REDIS_URL).db
        else f"smallworld-tests-redis-{number}.lock"
    )
    return Path(tempfile.gettempdir()) / name


@dataclasses.dataclass(frozen=True)
class _RedisUrl:
    prefix: str
    db: int

    def with_db(self, number: int) -> str:
        return f"{self.prefix}/{number}"


def make_url_redis(url: str) -> _RedisUrl:
    """``redis://host:port/9`` as its prefix and database number (0 when the URL names none)."""
    prefix, _, db = url.rstrip("/").rpartition("/")
    if prefix.endswith(":/") or not db.isdigit():
        return _RedisUrl(url.rstrip("/"), 0)
    return _RedisUrl(prefix, int(db))


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL of the test PostgreSQL database whose search path is a fresh, empty schema."""
    with postgres_schema() as url:
        yield url


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A URL of an empty Redis database that the test owns until it ends (see ``redis_database``)."""
    with redis_database() as url:
        yield url


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    """A Redis server of the test's own (tests/processes.py), that the test may stop and start again."""
    if shutil.which("redis-server") is None:
        service_unavailable("redis-server is not installed")
    folder = tmp_path / "redis"
    folder.mkdir()
    server = OwnRedis(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
