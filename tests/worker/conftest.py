"""The worker's domain operations in process, on SQLite and PostgreSQL, with a real SMTP server; and the
stack of real parts that the end-to-end tests run a ``smallworld worker`` process on.

Time is moved, never waited for: the sweep and the drain take ``now``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
from flask import Flask
from sqlmodel import select

from emails.delivery import backend_from_config
from service import create_app
from service.domain import deadlines, delivery
from service.domain.models import Game, GameAction, OutboxMail
from service.domain.schemas import CreateGame
from service.drain.queue import DrainReport
from service.infra.db import get_engine, get_session
from tests.conftest import migrate, postgres_schema, redis_database
from tests.factories import confirmed_game, reseed_new_game
from tests.processes import service_environment, start, stop
from tests.smtp import SMTPServer, smtp_server  # noqa: F401  (fixture)
from worker.tasks.ping import ping

R = TypeVar("R")


class Drained(Protocol):
    claimed: int


D = TypeVar("D", bound=Drained)


@pytest.fixture(params=["sqlite", "postgres"])
def mail_app(request: pytest.FixtureRequest, make_app: Callable[..., Flask], smtp_server: SMTPServer) -> Flask:  # noqa: F811
    """An app whose mail goes to the test's SMTP server, on SQLite and on PostgreSQL."""
    if request.param == "postgres":
        return app_mailing_to(smtp_server, make_app, DATABASE_URL=request.getfixturevalue("postgres_url"))
    return app_mailing_to(smtp_server, make_app)


@pytest.fixture
def pg_mail_app(make_app: Callable[..., Flask], smtp_server: SMTPServer, postgres_url: str) -> Flask:  # noqa: F811
    """:func:`mail_app` on PostgreSQL only, for what only PostgreSQL does (row locks, advisory locks)."""
    return app_mailing_to(smtp_server, make_app, DATABASE_URL=postgres_url)


def app_mailing_to(smtp: SMTPServer, make_app: Callable[..., Flask], **settings: Any) -> Flask:
    app = make_app(**smtp.settings, BASE_URL="https://smallworld.example", **settings)
    app.extensions["test.smtp"] = smtp
    return app


def new_game(app: Flask, players: int = 2, *, seed: str | None = None, **settings: Any) -> int:
    """A game started at once (seat 0 on turn), created and confirmed through the domain as the API would.
    With ``seed``, the game is dealt from that seed instead of a secret random one: the same game every run."""
    emails = [f"p{i}@example.org" for i in range(players)]
    request = CreateGame.model_validate(
        {
            "name": "Deadline test",
            "players": [{"name": f"Player {i}", "email": email} for i, email in enumerate(emails)],
            "settings": {"start_when_all_accepted": False, **settings},
        }
    )
    with app.app_context():
        zones = dict.fromkeys(emails, "Europe/Paris")  # as the players chose on their pages
        game, _ = confirmed_game(get_session(), request, app.extensions["smallworld.links"], time_zones=zones)
        if seed is not None:
            reseed_new_game(get_session(), game.id or 0, seed)
        return game.id or 0


def failing_at_the_second(send_one: Callable[..., None]) -> Callable[..., None]:
    """A drain's send of one row (``send_one``, its report the last argument) that fails, with a fault of the
    drain's own, at the second row of a batch: the first went out."""

    def send(*args: Any) -> None:
        if args[-1].sent == 1:
            raise RuntimeError("a fault in the drain's own code")
        send_one(*args)

    return send


def beside_rivals(drain: Callable[[], R], started: threading.Event, wait: float) -> tuple[R, list[R]]:
    """Run ``drain`` in a thread and, once ``started`` is set (its first send under way, which must come within
    ``wait`` seconds), drain again and again beside it, a rival every 50 ms, until it is done: its report and
    the rivals'."""
    reports: list[R] = []
    slow = threading.Thread(target=lambda: reports.append(drain()))
    rivals: list[R] = []
    try:
        slow.start()
        assert started.wait(wait)
        while slow.is_alive():
            rivals.append(drain())
            time.sleep(0.05)
    finally:
        slow.join()
    return reports[0], rivals


def killed_midway(
    app: Flask, drain: Callable[[], object], on_arrival: Callable[[Callable[[Any], None] | None], None]
) -> float:
    """Run ``drain`` in a forked child (its app's connections its own) and SIGKILL it while its peer holds what
    it sent, so that no ``finally`` of the drain runs: ``on_arrival`` sets the callback the peer (an SMTP server,
    a chat) calls with each arrival, or clears it with None. The time of the kill."""
    arrived, hold = threading.Event(), threading.Event()

    def holding(_arrival: Any) -> None:
        arrived.set()
        hold.wait(10)

    def drain_in_child() -> None:
        with app.app_context():
            get_engine(app).dispose(close=False)  # the parent's connections are not the child's
        drain()

    on_arrival(holding)
    child = multiprocessing.get_context("fork").Process(target=drain_in_child)
    try:
        child.start()
        assert arrived.wait(20)
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        return time.monotonic()
    finally:
        hold.set()
        on_arrival(None)


def once_the_lease_lapsed(drain: Callable[[], D], killed: float) -> D:
    """Drain every 50 ms until a drain claims something (the lease of the drain killed at ``killed`` lapsed,
    which must come within 10 s): that drain's report."""
    while (report := drain()).claimed == 0:
        assert time.monotonic() - killed < 10, "the lease of a killed drain never lapsed"
        time.sleep(0.05)
    return report


def wait_until(condition: Callable[[], R], what: str = "the condition", timeout: float = 60.0) -> R:
    """Ask ``condition`` every 50 ms until it holds, within ``timeout`` seconds: its last answer."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)
    return result


def game_row(app: Flask, game_id: int) -> Game:
    with app.app_context():
        return get_session().get(Game, game_id)  # type: ignore[return-value]


def sweep(app: Flask, at: datetime, **options: Any) -> deadlines.SweepReport:
    with app.app_context():
        return deadlines.sweep(get_session(), app.extensions["smallworld.links"], now=at, **options)


def sweeps_at_once(app: Flask, at: datetime, count: int) -> list[deadlines.SweepReport]:
    """``count`` sweeps as of ``at``, each in its own thread (its own app context and connection), started
    together; their reports."""
    reports: list[deadlines.SweepReport] = []
    start = threading.Barrier(count)

    def run() -> None:
        start.wait()
        reports.append(sweep(app, at))

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports


def drain(app: Flask, at: datetime | None = None, **settings: Any) -> DrainReport:
    with app.app_context():
        mail_settings = delivery.MailSettings.from_config(app.config)
        if settings:
            mail_settings = delivery.MailSettings(**{**mail_settings.__dict__, **settings})
        return delivery.deliver_due_mail(
            get_session(),
            backend_from_config(app.config),
            app.extensions["smallworld.links"],
            mail_settings,
            now=at,
        )


def outbox(app: Flask, template: str | None = None, game_id: int | None = None) -> list[OutboxMail]:
    with app.app_context():
        query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
        if template:
            query = query.where(OutboxMail.template == template)
        if game_id is not None:
            query = query.where(OutboxMail.game_id == game_id)
        return list(get_session().exec(query).all())


def logged(app: Flask, game_id: int, kind: str | None = None) -> list[GameAction]:
    with app.app_context():
        query = select(GameAction).where(GameAction.game_id == game_id).order_by(GameAction.version)  # type: ignore[arg-type]
        if kind:
            query = query.where(GameAction.kind == kind)
        return list(get_session().exec(query).all())


@dataclass
class WorkerStack:
    """The real parts of an end-to-end test: a fresh PostgreSQL schema, a Redis database of its own (broker
    and results), an SMTP server (aiosmtpd) in the test process, the app on them (for the test's own reads
    and requests), and ``smallworld worker`` processes started on the same settings, one at a time."""

    app: Flask
    smtp: SMTPServer
    env: dict[str, str]
    logs: Path
    database_url: str
    #: The worker's ``--concurrency``: how many pool processes run tasks.
    concurrency: int = 2
    worker: subprocess.Popen[bytes] | None = None
    starts: int = 0
    client: Any = field(init=False)

    def __post_init__(self) -> None:
        self.client = self.app.test_client()

    @property
    def mailbox(self) -> Any:
        return self.smtp.mailbox

    @property
    def log(self) -> Path:
        """The output of the latest worker started."""
        return self.logs / f"worker-{self.starts}.log"

    def session(self) -> Any:
        """An app context, for the test's reads through ``get_session()``."""
        return self.app.app_context()

    def start_worker(self, *, wait: bool = True) -> subprocess.Popen[bytes]:
        """Start a worker; with ``wait``, return once it answers a ping on the default queue (it is
        consuming). A worker busy with a task cannot answer: a test that wants it to take a task at once
        passes ``wait=False``. A worker still running (a test failed before stopping it) is stopped first: the
        stack's end stops only the latest, and one left behind would go on taking the tasks of whatever test,
        of this run or another, next takes this Redis database, on a database schema dropped by then."""
        self.stop_worker()
        self.starts += 1
        # Alone on its Redis database, the worker has no neighbours to synchronise with at start (mingle waits
        # a second for their answer) nor to gossip with.
        args = ["worker", "--concurrency", str(self.concurrency), "--without-mingle", "--without-gossip"]
        self.worker = start(args, self.env, self.log)
        try:
            if wait:
                assert ping.apply_async(ignore_result=False).get(timeout=60) == "pong"
        except BaseException:
            print(self.log.read_text())
            self.kill_worker()
            raise
        return self.worker

    def stop_worker(self) -> None:
        """SIGTERM the worker (a warm shutdown), then SIGKILL whatever of its process group is left."""
        if self.worker is not None:
            process, self.worker = self.worker, None
            stop(process)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    def kill_worker(self) -> None:
        """SIGKILL the worker and its pool: no chance to commit or to give a task back."""
        assert self.worker is not None
        os.killpg(self.worker.pid, signal.SIGKILL)
        self.worker.wait()
        self.worker = None

    def run(self, task: str, *args: Any, **kwargs: Any) -> Any:
        """Send ``task`` to the worker and wait for its result."""
        celery = self.app.extensions["celery"]
        return celery.send_task(task, args=args, kwargs=kwargs, ignore_result=False).get(timeout=60)


def child_environment(instance: Path, settings: dict[str, Any]) -> dict[str, str]:
    """The environment of ``smallworld`` child processes on the app's ``settings``: they read them from it, as
    JSON when they parse as JSON (service.infra.config)."""
    return service_environment(
        instance, **{f"SMALLWORLD_{k}": v if isinstance(v, str) else json.dumps(v) for k, v in settings.items()}
    )


@pytest.fixture
def app_and_environment(make_app: Callable[..., Flask]) -> Callable[..., tuple[Flask, dict[str, str]]]:
    """For a test that starts its own ``smallworld`` processes: an app on ``settings`` (on top of the tests'
    own, ``make_app``) and the environment of child processes on the same settings and instance folder."""

    def build(**settings: Any) -> tuple[Flask, dict[str, str]]:
        app = make_app(**settings)
        return app, child_environment(Path(app.instance_path), settings)

    return build


@contextlib.contextmanager
def worker_stack(
    tmp_path_factory: pytest.TempPathFactory, *, start_worker: bool = True, concurrency: int = 2, **settings: Any
) -> Iterator[WorkerStack]:
    """A :class:`WorkerStack` with ``settings`` on top of the stack's own (database, broker, SMTP), its
    worker started unless ``start_worker`` is false; everything stopped and dropped at the end."""
    with postgres_schema() as database_url, redis_database() as redis_url:
        smtp = SMTPServer()
        smtp.start()
        instance = tmp_path_factory.mktemp("instance")
        settings = {
            "DATABASE_URL": database_url,
            "BROKER_URL": redis_url,
            "RESULT_BACKEND": redis_url,
            "MAIL_BACKEND": "smtp",
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": smtp.port,
            **settings,
        }
        app = create_app({"TESTING": True, "INSTANCE_PATH": str(instance), "RATELIMIT_ENABLED": False, **settings})
        env = child_environment(instance, settings)
        stack = WorkerStack(app, smtp, env, tmp_path_factory.mktemp("logs"), database_url, concurrency)
        try:
            migrate(get_engine(app))
            if start_worker:
                stack.start_worker()
            yield stack
        finally:
            stack.stop_worker()
            smtp.stop()
            get_engine(app).dispose()


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerStack]:
    """The end-to-end tests' :class:`WorkerStack`, one per module, with the arguments of :func:`worker_stack` its
    module names in ``WORKER_STACK`` (settings, ``concurrency``, ``start_worker``)."""
    with worker_stack(tmp_path_factory, **getattr(request.module, "WORKER_STACK", {})) as started:
        yield started
