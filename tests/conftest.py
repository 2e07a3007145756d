"""Fixtures shared by every test: the Flask app, its client and CLI runner, real servers.

PostgreSQL and Redis are real (127.0.0.1, or ``SMALLWORLD_TEST_POSTGRES_URL`` /
``SMALLWORLD_TEST_REDIS_URL``). When one is unreachable its tests are skipped, unless
``SMALLWORLD_REQUIRE_SERVICES=1`` (CI sets it), in which case they fail.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import dataclasses
import fcntl
import functools
import importlib
import importlib.metadata
import os
import pkgutil
import random
import secrets
import shutil
import sys
import tempfile
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NoReturn

import kombu
import pytest
import redis
from flask import Flask
from flask.testing import FlaskCliRunner
from jinja2.bccache import Bucket, BytecodeCache
from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text, util
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session as OrmSession
from sqlalchemy.pool import NullPool
from sqlmodel import Session
from werkzeug.routing import Rule

from service import create_app
from service.domain import announce, lobby
from service.infra.broker import is_embedded
from service.infra.config import DEFAULTS, PREFIX
from service.infra.db import get_engine, make_engine, upgrade_database
from service.infra.mail_wakeup import ANNOUNCE_WANTED
from tests.processes import OwnRedis, guard_children

REQUIRE_SERVICES = os.environ.get("SMALLWORLD_REQUIRE_SERVICES") == "1"
POSTGRES_URL = os.environ.get("SMALLWORLD_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("SMALLWORLD_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
#: How many Redis databases from REDIS_URL's on the tests may take, one test (or module) each: runs in
#: parallel (pytest-xdist, several checkouts) then wait for one another only when all are taken.
REDIS_DATABASES = int(os.environ.get("SMALLWORLD_TEST_REDIS_DATABASES", "6"))

#: The variables the service reads (see service.infra.config), which tests set for themselves.
SERVICE_SETTINGS = {f"{PREFIX}_{name}" for name in [*DEFAULTS, "INSTANCE_PATH"]}


#: A file system in memory, where the tests' folders go when there is one (see pytest_configure).
MEMORY_FILES = Path("/dev/shm")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary folders (``tmp_path``: SQLite databases, instance and mail folders, logs) on the
    file system in memory when the machine has one: each SQLite commit there skips the wait for the disk
    (an fsync, a few milliseconds on a shared machine), and the tests commit tens of thousands of times.
    ``PYTEST_DEBUG_TEMPROOT`` or ``--basetemp``, when given, choose the place instead."""
    if MEMORY_FILES.is_dir() and os.access(MEMORY_FILES, os.W_OK | os.X_OK):
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(MEMORY_FILES))
    keep_bytecode()
    # The processes the tests start die with this one, however it ends (tests/processes.py).
    guard_children()
    if os.environ.get("SMALLWORLD_COMPILED_RULES") == "1":
        check_compiled_rules()


def check_compiled_rules() -> None:
    """``make test-compiled`` runs the rules' tests against the compiled build (``make compiled``): stop at
    once unless every module of ``rules`` imported is a compiled one, so that the run cannot test the pure
    Python package instead."""
    import rules

    modules = [rules.__name__] + [m.name for m in pkgutil.walk_packages(rules.__path__, "rules.")]
    pure = [name for name in modules if not str(importlib.import_module(name).__file__).endswith(".so")]
    if pure:
        raise pytest.UsageError(f"not the compiled build (make compiled): {', '.join(pure)} from {rules.__file__}")


#: Test processes per core for ``-n auto`` (see pytest_xdist_auto_num_workers).
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (``make test``): two test processes per core, not pytest-xdist's one.

    A good part of the suite waits rather than computes: for the processes it starts (web servers, Celery
    workers and beat, the demo's games on a 3 s clock), for Chromium, for PostgreSQL, for leases and
    deadlines on the real clock. With one process per core, a core sat idle while its process waited: on the
    quiet 2-core machine each of the two spent about 130 of its 330 s of tests neither computing nor waiting
    for a child's CPU. A second process per core computes in those waits (bench/README.md, "The test suite").
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still chooses the number, as pytest-xdist documents."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if chosen.isdigit():
        return int(chosen)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return WORKERS_PER_CORE * cores


def keep_bytecode() -> None:
    """Compiled modules kept (``__pycache__``) for the run, even where the environment says not to write them
    (``PYTHONDONTWRITEBYTECODE``, set on some machines, CI's among them): else each test process rewrites the
    asserts of every test module it collects (pytest keeps the result as bytecode), and each process the tests
    start (web servers, Celery workers, ``smallworld`` commands, the demo) compiles the service's modules
    again, 6 s of CPU per test process and 0.2 s per child. Set here, before pytest-xdist starts its workers,
    the workers and every process they start inherit it; this process writes what it imports from now on."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


#: The test files that take longest on the clock, longest first (each test's wall time summed per file, in a
#: quiet run of ``make test``'s four workers on two cores). ``make test`` hands whole files to its workers
#: (``--dist loadfile`` in pyproject.toml) in collection order; these are collected first, so that no worker starts
#: one of them while the others have nothing left (a new 37 s file, not yet listed, was once handed out last and kept
#: a worker busy 29 s after the others had finished). A file not listed keeps its place after them; a name that no
#: longer exists is ignored.
SLOWEST_FIRST = (
    "test_demo.py",
    "rules/test_properties.py",
    "worker/test_worker_processes.py",
    "api/test_openapi_fuzz.py",
    "worker/test_outbox_leases.py",
    "api/test_whole_game.py",
    "worker/test_chat_leases.py",
    "domain/test_play_fuzz.py",
    "test_hidden_information.py",
    "domain/test_story_since.py",
    "pages/test_accessibility.py",
    "pages/test_home.py",
    "rules/test_legal_actions.py",
    "pages/test_table_talk_browser.py",
    "pages/test_browser.py",
    "worker/test_tally_worker_kill.py",
    "domain/test_undo_from_start.py",
    "deploy/test_production_stack.py",
    "test_lint.py",
    "test_cli.py",
    "test_orders_by_mail.py",
    "pages/test_turn_steps.py",
    "worker/test_mail_end_to_end.py",
    "worker/test_outbox_faults.py",
    "domain/test_tally.py",
    "rules/test_bots.py",
    "pages/test_resign_and_rematch_browser.py",
    "domain/test_chat_notices.py",
    "worker/test_embedded_mail.py",
    "admin/test_admin_acts.py",
    "emails/test_delivery.py",
    "worker/test_outbox_delivery.py",
    "deploy/test_compose.py",
    "worker/test_house_bot_worker.py",
    "worker/test_digest_worker.py",
    "worker/test_retention_worker.py",
    "infra/test_redis_results.py",
    "admin/test_admin_browser.py",
    "worker/test_chat_end_to_end.py",
    "web/test_resign_and_rematch.py",
    "pages/test_my_data.py",
    "domain/test_privacy.py",
    "domain/test_table_talk.py",
    "domain/test_retention.py",
    "domain/test_house_bot.py",
    "worker/test_deadlines.py",
    "worker/test_announce_worker.py",
    "domain/test_announce.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`SLOWEST_FIRST` first, in its order; the others after them, as collected."""
    tests = Path(__file__).parent
    rank = {tests / name: place for place, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))


def pytest_collection(session: pytest.Session) -> None:
    """In a pytest-xdist worker, import the test modules before the collection does, each worker starting at its
    own place in the list (worker k of n at k/n of it) and going round.

    Every worker collects every test module, and pytest rewrites a module's asserts as it imports it, keeping the
    result beside it (``__pycache__``). In a fresh clone, where none is kept yet, the four workers of ``make test``
    rewrote every module at the same moment, each about 5 s of CPU that a warm tree does not spend (bench/README.md,
    "The test suite"). Each now rewrites its own part first and finds most of the others' parts kept by the time
    it reaches them. The collection that follows finds the modules imported, and imports again, reporting it as
    it always does, any module whose import failed here."""
    worker = getattr(session.config, "workerinput", None)
    if worker is None or not worker["workerid"].removeprefix("gw").isdigit():
        return
    try:
        from _pytest.pathlib import import_path  # what the collection imports a test module with
    except ImportError:
        return
    config = session.config
    modules = sorted(set(_test_modules(config)))
    start = len(modules) * int(worker["workerid"].removeprefix("gw")) // max(1, int(worker["workercount"]))
    for path in modules[start:] + modules[:start]:
        with contextlib.suppress(Exception):
            import_path(
                path,
                mode=config.getoption("importmode"),
                root=config.rootpath,
                consider_namespace_packages=config.getini("consider_namespace_packages"),
            )


def _test_modules(config: pytest.Config) -> Iterator[Path]:
    """The test modules under the paths the run was given (``testpaths`` when none)."""
    here = config.invocation_params.dir
    for arg in config.args:
        path = Path(here, arg.split("::")[0])
        if path.is_file():
            yield path
        elif path.is_dir():
            for pattern in config.getini("python_files"):
                yield from (found for found in path.rglob(pattern) if "__pycache__" not in found.parts)


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


#: Whether the steps committed now are announced in this process (:func:`announce_in_process`): off during a
#: test marked ``announced_by_worker``.
_ANNOUNCING_HERE = {"on": True}


@pytest.fixture(autouse=True, scope="session")
def announce_in_process_for_the_session() -> Iterator[None]:
    """Each step's announcement (``service.domain.announce``: its turn mails, chat notice, bot wake-up) made in
    this process as soon as the step's transaction commits, as Celery's ``task_always_eager`` runs a task where
    it is sent: the job a worker runs a moment later in production, through the same operation, so that a test
    that takes a step reads its mail at once. Listened for the whole session, so that the steps a module's or a
    session's fixture takes (a game played to its third turn for a module of page tests) are announced too, not
    only those of a test's own body."""
    event.listen(OrmSession, "after_commit", _announce_now, insert=True)
    try:
        yield
    finally:
        event.remove(OrmSession, "after_commit", _announce_now)


@pytest.fixture(autouse=True)
def announce_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked ``announced_by_worker`` leave each step's announcement to a real worker's job
    (``tests/worker/test_announce_worker.py``): the task is sent as in production."""
    if not request.node.get_closest_marker("announced_by_worker"):
        yield
        return
    _ANNOUNCING_HERE["on"] = False
    try:
        yield
    finally:
        _ANNOUNCING_HERE["on"] = True


def _announce_now(session: OrmSession) -> None:
    """The announcements the committed transaction asked for (``mail_wakeup.want_announcement``), each in a
    session of its own on the same connection or engine (the committed one can run no more SQL here), with
    the link maker its step was made with; none is sent to a worker."""
    if not _ANNOUNCING_HERE["on"]:
        return  # the after-commit hook of service.infra.mail_wakeup sends the task
    wanted = session.info.pop(ANNOUNCE_WANTED, None)
    for game_id, links in sorted((wanted or {}).items()):
        with Session(bind=session.bind, join_transaction_mode="create_savepoint") as announcing:
            announce.announce(announcing, game_id, links)


def deal_games_from(monkeypatch: pytest.MonkeyPatch, seed: object) -> None:
    """New games dealt from ``seed`` rather than a secret random one (``service.domain.lobby`` draws each
    game's seed with ``secrets.token_hex``), so that every run meets the same games; the service's other
    secrets stay random."""
    dealt = random.Random(f"game seed {seed}")
    monkeypatch.setattr(
        lobby,
        "secrets",
        SimpleNamespace(
            token_hex=lambda n: f"{dealt.getrandbits(8 * n):0{2 * n}x}",
            token_urlsafe=secrets.token_urlsafe,
            compare_digest=secrets.compare_digest,
        ),
    )


#: Each URL rule's two builders (``werkzeug.routing.Rule._compile_builder``), by what they are made from.
_URL_BUILDERS: dict[tuple[Any, ...], Callable[..., tuple[str, str]]] = {}


def _compile_builder_once(rule: Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
    """``Rule._compile_builder``, made once per test process for each rule instead of once per app.

    Werkzeug writes, for every rule of every app, two small Python functions that build the rule's URLs
    (generated as syntax trees, then compiled): about 40 ms of each new app's 50–60, and the tests build about
    a thousand apps. The function depends only on what this key holds: the rule's text and parsed parts
    (``_trace``), the names of its defaults and the URL form of those that fill one of its variables, and
    ``append_unknown``; it reads the rule's converters through its ``self`` when called, so one made for an
    equal rule of another app builds the same URLs once bound to this one.
    """
    defaults = rule.defaults or {}
    key = (
        append_unknown,
        rule.rule,
        tuple(rule._trace),
        tuple(defaults),
        tuple(
            rule._converters[name].to_url(defaults[name])
            for dynamic, name in rule._trace
            if dynamic and name in defaults
        ),
    )
    builder = _URL_BUILDERS.get(key)
    if builder is None:
        builder = _URL_BUILDERS[key] = _compile_builder(rule, append_unknown)
    return builder


#: What ``Rule.compile`` made of each URL rule (its parts, trace, converters and arguments), by what it reads.
_COMPILED_RULES: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _compile_once(rule: Rule) -> None:
    """``Rule.compile``, its parsing of the rule's text done once per test process for each rule instead of once
    per app: the other 10 ms of each new app's 19 once its builders are made once (above).

    What werkzeug 3.1's ``compile`` makes depends only on this key: the rule's text, subdomain or host, whether
    slashes merge, the map's host matching and converter classes, and the arguments the rule had before (the
    names of its defaults). Each converter is made for its map (``converter.map``): a copy bound to this
    rule's map takes its place, the rest (the parts' regular expressions and weights, the trace) is shared.
    """
    url_map = rule.map
    key = (
        rule.rule,
        rule.subdomain,
        rule.host,
        rule.merge_slashes,
        url_map.host_matching,
        tuple(url_map.converters.items()),
        frozenset(rule.arguments),
    )
    compiled = _COMPILED_RULES.get(key)
    if compiled is None:
        _compile(rule)
        _COMPILED_RULES[key] = (list(rule._parts), list(rule._trace), dict(rule._converters), set(rule.arguments))
        return
    parts, trace, converters, arguments = compiled
    rule._parts, rule._trace, rule.arguments = list(parts), list(trace), set(arguments)
    rule._converters = {}
    for name, converter in converters.items():
        rule._converters[name] = copy.copy(converter)
        rule._converters[name].map = url_map
    rule._build = rule._compile_builder(False).__get__(rule, None)
    rule._build_unknown = rule._compile_builder(True).__get__(rule, None)


# The keys above are what werkzeug 3.1's compile and builder read; another version is left to compile its own.
if importlib.metadata.version("werkzeug").startswith("3.1."):
    _compile_builder = Rule._compile_builder
    Rule._compile_builder = _compile_builder_once  # type: ignore[method-assign, assignment]
    _compile = Rule.compile
    Rule.compile = _compile_once  # type: ignore[method-assign]


class _TemplateCodeOncePerProcess(BytecodeCache):
    """Each page template compiled once per test process instead of once per app that renders it.

    Every app has its own Jinja environment, whose templates it compiles (parse, generate Python, ``compile``)
    the first time it renders each: 30 ms of CPU a template, and the tests build about a thousand apps, most of
    which render a page or two. Jinja's own bytecode cache keeps what a template compiled to, under its name,
    file and a checksum of its source; the key here adds what else the compiler reads from the environment:
    whether the template autoescapes, the syntax and whitespace settings, the extensions, and the filters and
    tests (their names, and what each is passed). Equal apps (``create_app``) compile equal code, which each
    app then runs in its own environment, with its own globals, as it would have compiled it.
    """

    def __init__(self) -> None:
        self._code: dict[tuple[Any, ...], Any] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        bucket.code = self._code.get(self._key(bucket))

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[self._key(bucket)] = bucket.code

    @staticmethod
    def _key(bucket: Bucket) -> tuple[Any, ...]:
        env = bucket.environment
        autoescape = getattr(env.autoescape, "__func__", env.autoescape)
        return (
            bucket.key,
            bucket.checksum,
            autoescape,
            env.block_start_string,
            env.block_end_string,
            env.variable_start_string,
            env.variable_end_string,
            env.comment_start_string,
            env.comment_end_string,
            env.line_statement_prefix,
            env.line_comment_prefix,
            env.trim_blocks,
            env.lstrip_blocks,
            env.newline_sequence,
            env.keep_trailing_newline,
            env.optimized,
            env.is_async,
            env.finalize,
            tuple(sorted(env.extensions)),
            tuple(sorted((name, getattr(f, "jinja_pass_arg", None)) for name, f in env.filters.items())),
            tuple(sorted((name, getattr(f, "jinja_pass_arg", None)) for name, f in env.tests.items())),
        )


# The key above is what Jinja 3.1's compiler reads; another version is left to compile each app's own.
if importlib.metadata.version("jinja2").startswith("3.1."):
    Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": _TemplateCodeOncePerProcess()}


class _StatementsCompiledOncePerProcess:
    """An engine's compiled-statement cache that shares what it compiled with the test process's other engines.

    SQLAlchemy keeps what a statement compiled to (its SQL text, parameter and result processing) in a cache of
    the engine's, keyed by the statement's structure and the engine's dialect *object*; each test's app has its
    own engine, so it compiles every statement it runs again (about 11 % of an app test's CPU). This view keys
    the process's store by what the compiler reads from the dialect instead: its class and the state of the
    dialect and of its identifier preparer and type compiler (server version, parameter style, quoting, options).
    Engines whose dialects agree on all of it compile the same statement to the same thing, schema included:
    the tests select a PostgreSQL schema by the connection's ``search_path``, not by ``schema_translate_map``.
    The dialect's default schema (the ``search_path``'s, so each PostgreSQL test's own) is read by the compiler
    only for a ``schema_translate_map`` (SQLAlchemy 2.0, ``SQLCompiler._render_schema_translates``), which the key
    tells (its fourth part): it is part of the key of those statements alone, and the PostgreSQL tests' engines
    share the rest.
    """

    _store: util.LRUCache[Any, Any] = util.LRUCache(5000)

    def __init__(self, dialect_state: tuple[Any, ...], default_schema: str | None) -> None:
        self._dialect_state = dialect_state
        self._default_schema = default_schema

    def _key(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        _dialect, statement, column_keys, schema_translated, *rest = key
        schema = self._default_schema if schema_translated else None
        return (self._dialect_state, schema, statement, column_keys, schema_translated, *rest)

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
        return self._store.get(self._key(key), default)

    def __setitem__(self, key: tuple[Any, ...], compiled: Any) -> None:
        self._store[self._key(key)] = compiled

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        self._store.clear()


#: What a dialect, its identifier preparer and type compiler hold besides their state: the dialect they belong to;
#: the preparer's memo of names already quoted; the dialect's memo of each type's processors (made from its
#: state); the psycopg dialect's adapters, with which it opens connections (no statement is compiled with them);
#: and the default schema, which the cache's key holds where the compiler reads it.
_NOT_STATE = {"dialect", "_strings", "_type_memos", "_psycopg_adapters_map", "default_schema_name"}


def _state_of(thing: object) -> tuple[Any, ...] | None:
    """``thing``'s class and attributes, or None when one is neither a plain value, a module, a class nor such an
    object."""
    state: list[tuple[str, Any]] = []
    for name, value in sorted(vars(thing).items()):
        if name in _NOT_STATE:
            continue
        if isinstance(value, (types.ModuleType, type, str, int, float, bool, type(None))) or (
            isinstance(value, tuple) and all(isinstance(item, (str, int, float, bool)) for item in value)
        ):
            state.append((name, value))
        elif name in ("identifier_preparer", "type_compiler", "type_compiler_instance"):
            inner = _state_of(value)
            if inner is None:
                return None
            state.append((name, inner))
        else:
            return None
    return (type(thing), *state)


@event.listens_for(Engine, "engine_connect")
def _share_compiled_statements(connection: Connection) -> None:
    """Give a new engine the shared cache, once its first connection has told its dialect the server's version."""
    engine = connection.engine
    if isinstance(engine._compiled_cache, util.LRUCache) and not engine._compiled_cache:
        dialect_state = _state_of(engine.dialect)
        if dialect_state is not None:  # something the key cannot compare: the engine keeps its own cache
            shared = _StatementsCompiledOncePerProcess(dialect_state, engine.dialect.default_schema_name)
            engine._compiled_cache = shared  # type: ignore[assignment]


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
        migrate(get_engine(app))
        prepare_broker_tables(app.config["BROKER_URL"])
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


def migrate(engine: Engine) -> None:
    """``upgrade_database(engine)``, for a fraction of its cost when the database is empty.

    What the migrations build from an empty database is made once per test process (per database kind),
    then handed to each new test's database: on SQLite a copy of the migrated file; on PostgreSQL a
    migrated schema whose rows a previous test's end deleted (:func:`postgres_schema`), renamed to the
    test's own, or when none is spare the statements the migrations sent, sent again. Either way the
    schema is the one the migrations build (they run in full once per process, and the migration tests in
    ``tests/infra`` run them one by one), without Alembic loading and running every migration script again
    for each of a thousand tests, nor PostgreSQL creating and dropping twenty tables each time.
    A database that is not empty is upgraded by Alembic, as the service does.
    """
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        target = Path(url.database)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(_migrated_sqlite(), target)
            return
    elif url.get_backend_name() == "postgresql":
        with engine.begin() as connection:
            if not inspect(connection).get_table_names():
                _migrated_postgres().fill(connection)
                return
    upgrade_database(engine)


@functools.cache
def _migrated_sqlite() -> Path:
    """A SQLite file that the migrations brought from nothing to their head, in this process's own folder."""
    folder = Path(tempfile.mkdtemp(prefix="smallworld-tests-schema-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    template = folder / "migrated.sqlite"
    engine = make_engine(f"sqlite:///{template}")
    try:
        upgrade_database(engine)
    finally:
        engine.dispose()  # the last connection closed: the write-ahead log is folded into the file
    return template


def prepare_broker_tables(broker_url: str) -> None:
    """Give a new embedded broker its tables, as a copy of a broker file that kombu's transport made them in.

    The transport creates them at a process's first use of a broker URL (``Channel._open``: an engine, then
    ``metadata.create_all``), about 5 ms of CPU; each app the tests build has a broker file of its own in its own
    instance folder, so its first task sent paid for them. The copy is what that makes, before any queue or
    message: each test still declares its own queues and sends its own messages, into a file no other test sees.
    """
    database = make_url(broker_url.split("+", 1)[1]).database if is_embedded(broker_url) else None
    if not database or database == ":memory:":
        return
    target = Path(database)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_broker_with_tables(), target)


@functools.cache
def _broker_with_tables() -> Path:
    """A broker file in which kombu's SQLAlchemy transport made its tables, in this process's own folder."""
    folder = Path(tempfile.mkdtemp(prefix="smallworld-tests-broker-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    template = folder / "broker.sqlite"
    with kombu.Connection(f"sqla+sqlite:///{template}") as connection:
        engine, _session = connection.default_channel._open()  # creates the tables for a URL it has not seen
        engine.dispose()
    return template


@dataclasses.dataclass
class _MigratedPostgres:
    """What the migrations build in an empty PostgreSQL schema, and the migrated schemas ready for a test."""

    #: The statements (and their parameters) the migrations sent, in order; none names the schema.
    statements: list[tuple[str, Any]]
    #: The schema's shape (:func:`_schema_shape`): a schema a test hands back is used again only if unchanged.
    shape: str
    #: The tables in an order in which their rows can be deleted (a table before those it refers to).
    tables: list[str]
    #: Migrated schemas with no rows, not in use.
    spares: list[str] = dataclasses.field(default_factory=list)

    def fill(self, connection: Any) -> None:
        """Migrate the connection's empty schema: a spare one takes its place, or the statements run in it."""
        schema = connection.exec_driver_sql("SELECT current_schema()").scalar_one()
        if self.spares:
            spare = self.spares.pop()
            connection.exec_driver_sql(f'DROP SCHEMA "{schema}"')
            connection.exec_driver_sql(f'ALTER SCHEMA "{spare}" RENAME TO "{schema}"')
            return
        for statement, parameters in self.statements:
            connection.exec_driver_sql(statement, parameters)

    def take_back(self, connection: Any, schema: str) -> bool:
        """Keep ``schema`` as a spare, its rows deleted and its sequences reset, if the test left its shape as
        the migrations built it; whether it was kept. A test's connections are gone or idle by now: a lock
        still held (a transaction left open) makes it give up rather than wait."""
        if _schema_shape(connection, schema) != self.shape:
            return False
        spare = new_schema_name()
        try:
            with connection.begin():
                connection.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
                for table in self.tables:
                    connection.exec_driver_sql(f'DELETE FROM "{schema}"."{table}"')
                connection.execute(
                    text(
                        "SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)"
                        " FROM pg_sequences WHERE schemaname = :schema"
                    ),
                    {"schema": schema},
                )
                connection.exec_driver_sql(f'ALTER SCHEMA "{schema}" RENAME TO "{spare}"')
        except DBAPIError:
            return False
        self.spares.append(spare)
        return True


@functools.cache
def _migrated_postgres() -> _MigratedPostgres:
    """The migrations run once in a schema of their own, their statements recorded; the schema is the first
    spare."""
    statements: list[tuple[str, Any]] = []
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    with engine.connect() as connection:
        schema = _create_schema(connection)
    migrating = make_engine(_schema_url(schema))

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        statements.append((statement, parameters or None))

    event.listen(migrating, "before_cursor_execute", record)
    try:
        upgrade_database(migrating)
        with migrating.connect() as connection:
            ordered = inspect(connection).get_sorted_table_and_fkc_names()
    finally:
        migrating.dispose()
    assert statements and not any(schema in f"{statement} {parameters}" for statement, parameters in statements)
    # Referred-to tables first; deleted the other way round. A cycle of references would leave pairs at the
    # end under ``None``: there is none, and rows could not then be deleted one table at a time.
    assert ordered[-1][0] is not None or not ordered[-1][1], f"foreign keys in a cycle: {ordered[-1][1]}"
    tables = [name for name, _ in reversed(ordered) if name is not None and name != "alembic_version"]
    with engine.connect() as connection:
        migrated = _MigratedPostgres(statements, _schema_shape(connection, schema), tables, [schema])
    engine.dispose()
    atexit.register(_drop_spares, migrated)
    return migrated


def _drop_spares(migrated: _MigratedPostgres) -> None:
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    with contextlib.suppress(DBAPIError), engine.connect() as connection:
        for spare in migrated.spares:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{spare}" CASCADE')
        connection.commit()
    engine.dispose()


def _schema_shape(connection: Any, schema: str) -> str:
    """Everything a test could change in the schema's definition, as text without the schema's name: its
    relations (tables, indexes, sequences, views), columns, constraints, indexes, functions and Alembic's
    revision."""
    rows = connection.execute(
        text(
            """
            WITH space AS (SELECT oid FROM pg_namespace WHERE nspname = :schema)
            SELECT 'relation ' || c.relkind::text || ' ' || c.relname FROM pg_class c
                WHERE c.relnamespace = (SELECT oid FROM space)
            UNION ALL SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                    || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE c.relnamespace = (SELECT oid FROM space) AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL SELECT 'constraint ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
                FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
                WHERE k.connamespace = (SELECT oid FROM space)
            UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i
                JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = (SELECT oid FROM space)
            UNION ALL SELECT 'function ' || p.proname FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM space)
            """
        ),
        {"schema": schema},
    ).scalars()
    shape = "\n".join(sorted(rows)).replace(f'"{schema}".', "").replace(f"{schema}.", "")
    tables = connection.execute(
        text("SELECT 1 FROM pg_tables WHERE schemaname = :schema AND tablename = 'alembic_version'"),
        {"schema": schema},
    ).all()
    if tables:
        revisions = connection.exec_driver_sql(f'SELECT version_num FROM "{schema}".alembic_version').scalars()
        shape += "\nrevision " + " ".join(sorted(revisions))
    connection.rollback()
    return shape


def _create_schema(connection: Any) -> str:
    schema = new_schema_name()
    connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    connection.commit()
    return schema


#: The first key of the advisory locks by which test runs hold their schemas ("test" in ASCII).
_RUN_LOCKS = 0x74657374
#: The schemas the tests create: ``test_<run>_<random>``, where ``<run>`` names the test process.
_SCHEMA_NAMES = r"^test_([0-9a-f]{8})_[0-9a-f]+$"


def new_schema_name() -> str:
    """A name for a new schema of this test process, which it holds (:func:`_run_holding_schemas`) until it ends;
    a later run drops it if it is still there then."""
    return f"test_{_run_holding_schemas()}_{uuid.uuid4().hex[:8]}"


@functools.cache
def _run_holding_schemas() -> str:
    """This test process's name in its schemas' names, held for as long as it lives by a session advisory lock of
    PostgreSQL (on a connection kept open until the process ends, however: the server then gives the lock up).
    Taken before the first schema is named after it; then drops the schemas of runs whose lock is free, that
    is, runs that are over, and never those of a run that lives (several runs may share the database)."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3}, poolclass=NullPool)
    keeper = engine.connect()
    run = secrets.token_hex(4)
    while not _lock_run(keeper, run):  # the name of a run that lives (one in four billion): another
        run = secrets.token_hex(4)
    _KEEPERS.append(keeper)
    _drop_schemas_of_runs_that_are_over(keeper, run)
    return run


#: The connections that hold this process's runs' locks, open until it ends.
_KEEPERS: list[Any] = []


def _lock_run(connection: Any, run: str, *, unlock: bool = False) -> bool:
    """Take (or give up) the lock of ``run`` on ``connection``, for as long as it lasts; whether that was done."""
    function = "pg_advisory_unlock" if unlock else "pg_try_advisory_lock"
    done = connection.execute(
        text(f"SELECT {function}(:space, hashtext(:run))"), {"space": _RUN_LOCKS, "run": run}
    ).scalar()
    connection.commit()
    return bool(done)


def _drop_schemas_of_runs_that_are_over(connection: Any, own: str) -> list[str]:
    """Drop the schemas of every test run that is over (its lock free); the names dropped."""
    names = connection.execute(
        text("SELECT nspname FROM pg_namespace WHERE nspname ~ :names ORDER BY nspname"), {"names": _SCHEMA_NAMES}
    ).scalars()
    runs: dict[str, list[str]] = {}
    for name in names:
        runs.setdefault(name.split("_")[1], []).append(name)
    connection.commit()
    dropped = []
    for run, schemas in runs.items():
        if run == own:
            continue
        # Held while they are dropped: two runs starting together do not both drop them.
        if not _lock_run(connection, run):
            continue  # a run that lives
        try:
            for schema in schemas:
                try:
                    with connection.begin():
                        # A process of the dead run still connected (being reaped) may hold a lock: not waited for.
                        connection.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
                        connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                    dropped.append(schema)
                except DBAPIError:
                    pass  # the next run tries again
        finally:
            _lock_run(connection, run, unlock=True)
    return dropped


def _schema_url(schema: str) -> str:
    """The test database's URL, its search path ``schema``.

    A commit of the tests' own data need not wait for the disk (``synchronous_commit=off``): what is
    committed is seen by every connection at once all the same, and only a crash of the server itself,
    which no test causes, could lose it. A commit then takes a fraction of a millisecond instead of an fsync.
    """
    url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema} -csynchronous_commit=off"})
    return url.render_as_string(hide_password=False)


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL of the test PostgreSQL database whose search path is a fresh, empty schema, dropped at the end
    (or, migrated and left as the migrations built it, its rows deleted and kept for another test)."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    try:
        connection = engine.connect()
    except OperationalError as error:
        engine.dispose()
        service_unavailable(f"PostgreSQL is not reachable at {POSTGRES_URL}: {error.orig}")
    with connection:
        schema = _create_schema(connection)
    try:
        yield _schema_url(schema)
    finally:
        with engine.connect() as connection:
            migrated = _migrated_postgres.cache_info().currsize and _migrated_postgres()
            if not (migrated and migrated.take_back(connection, schema)):
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
