"""The production process set on this machine, without Docker: gunicorn with deploy/gunicorn.conf.py, Celery
workers, one beat (RedBeat), on the local PostgreSQL and a Redis, with an SMTP server (aiosmtpd) in the test.

Every process is started in its own session, so killing it (``SIGKILL`` to the group) takes its children
(gunicorn's and Celery's pool processes) too, and :meth:`Stack.close` never leaves one behind. The
service's database connections carry an ``application_name`` of their own, so a test can cut exactly
those (``pg_terminate_backend``) and no other test's.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from flask import Flask
from sqlalchemy import create_engine, make_url, text

from service import create_app
from service.infra.db import get_engine, upgrade_database
from tests.conftest import POSTGRES_URL, new_schema_name
from tests.processes import SMALLWORLD, free_port, service_environment
from tests.smtp import SMTPServer

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
HOST = socket.gethostname()


@contextlib.contextmanager
def postgres_schema(application_name: str) -> Iterator[str]:
    """A fresh schema of the test database, and a URL whose connections are named ``application_name``."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    name = new_schema_name()
    with engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
        connection.commit()
    try:
        url = make_url(POSTGRES_URL).update_query_dict(
            {"options": f"-csearch_path={name}", "application_name": application_name}
        )
        yield url.render_as_string(hide_password=False)
    finally:
        with engine.connect() as connection:
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :name"),
                {"name": application_name},
            )
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
            connection.commit()
        engine.dispose()


@contextlib.contextmanager
def running_stack(
    broker_url: str,
    smtp: SMTPServer,
    folder: Path,
    prefix: str = "smallworld-stack",
    web_args: tuple[str, ...] = (),
    **settings: str,
) -> Iterator[Stack]:
    """The whole process set started on a fresh schema (its connections named ``prefix-…``), sending to
    ``smtp``, with ``settings`` on top of the stack's own and ``web_args`` after gunicorn's configuration
    (its command line wins); everything stopped at the end, and every process's log printed if the test
    failed."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with postgres_schema(name) as database_url:
        stack = Stack(database_url, broker_url, name, smtp, folder, extra=settings, web_args=web_args)
        try:
            stack.start_all(workers=2)
            yield stack
        except BaseException:
            print(stack.logs())
            raise
        finally:
            stack.close()


def terminate_connections(application_name: str) -> int:
    """Cut every PostgreSQL connection of the service (as a failover or a restart would); how many."""
    engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            cut = connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = :name AND pid <> pg_backend_pid()"
                ),
                {"name": application_name},
            ).scalar_one()
            connection.commit()
            return int(cut)
    finally:
        engine.dispose()


@dataclass
class Stack:
    """The processes of one production-like deployment, and a view of its database from the test."""

    database_url: str
    broker_url: str
    application_name: str
    smtp: SMTPServer
    folder: Path
    web_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    commands: dict[str, list[str]] = field(default_factory=dict)
    #: Restarts made by :meth:`restart_policy`, per process, with the exit status that caused each.
    restarts: dict[str, list[int]] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)
    #: gunicorn options after ``--config`` (e.g. ``--access-logformat``): they win over the file's.
    web_args: tuple[str, ...] = ()
    app: Flask = field(init=False)
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        settings = {
            "ENV": "production",
            "SECRET_KEY": secrets.token_urlsafe(32),
            "DATABASE_URL": self.database_url,
            "BROKER_URL": self.broker_url,
            # Only so the test can wait for a task it sends itself (the service reads no results).
            "RESULT_BACKEND": self.broker_url,
            "MAIL_BACKEND": "smtp",
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": str(self.smtp.port),
            "BASE_URL": f"http://127.0.0.1:{self.web_port}",
            "SWEEP_SECONDS": "1",
            "RATELIMIT_STORAGE_URI": self.broker_url,
            # The bots play in seconds what people play in weeks, all from 127.0.0.1.
            "RATELIMIT_LINKS": "100000 per minute",
            "RATELIMIT_ACTIONS": "100000 per minute",
            "RATELIMIT_NEW_GAMES": "100000 per minute",
            # …and each of its games invites addresses that never played with its host.
            "RATELIMIT_STRANGERS_PER_HOST": "100000 per day",
            "RATELIMIT_STRANGERS_PER_CLIENT": "100000 per day",
            **self.extra,
        }
        instance = self.folder / "instance"
        self.env = service_environment(instance, **{f"SMALLWORLD_{k}": v for k, v in settings.items()})
        self.env.update(GUNICORN_BIND=f"127.0.0.1:{self.web_port}", WEB_CONCURRENCY="2", GUNICORN_THREADS="4")
        self.app = create_app(
            {"TESTING": True, "INSTANCE_PATH": str(instance), **{k: v for k, v in settings.items() if k != "ENV"}}
        )

    # -- processes --------------------------------------------------------------------------------------
    def _start(self, name: str, argv: list[str]) -> None:
        self.commands[name] = argv
        log = self.folder / f"{name}.log"
        with log.open("ab") as output:
            self.processes[name] = subprocess.Popen(
                argv, env=self.env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )

    def migrate(self) -> None:
        subprocess.run([SMALLWORLD, "db", "upgrade"], env=self.env, check=True, capture_output=True)
        upgrade_database(get_engine(self.app))  # (a no-op: the test's own view of the same schema)

    def start_web(self) -> None:
        config = str(DEPLOY / "gunicorn.conf.py")
        argv = [sys.executable, "-m", "gunicorn", "--config", config, *self.web_args, "service:create_app()"]
        self._start("web", argv)

    def start_worker(self, name: str, *args: str) -> None:
        self._start(name, [SMALLWORLD, "worker", "-n", f"{name}@%h", "--concurrency", "2", *args])

    def start_beat(self, name: str = "beat") -> None:
        # As in deploy/compose.yaml: RedBeat's lock lasts 5 × this, and a waiting beat tries it this often.
        self._start(name, [SMALLWORLD, "beat", "--max-interval", "5"])

    def start_all(self, workers: int = 2) -> None:
        self.migrate()
        self.start_web()
        for number in range(1, workers + 1):
            self.start_worker(f"w{number}")
        self.start_beat()
        self.wait_for_web()
        for number in range(1, workers + 1):
            self.wait_for_worker(f"w{number}")

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the process and everything it started; wait for it to end."""
        process = self.processes.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        with contextlib.suppress(ProcessLookupError):  # whatever of its group outlived it
            os.killpg(process.pid, signal.SIGKILL)

    def stop(self, name: str) -> None:
        self.kill(name, signal.SIGTERM)

    def close(self) -> None:
        """Stop every process (SIGTERM to all at once, then SIGKILL to whatever is left after 30 s)."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for name in list(self.processes):
            self.kill(name, signal.SIGTERM)
        get_engine(self.app).dispose()

    def restart_policy(self, stop: threading.Event, delay: float = 1.0) -> None:
        """What compose's ``restart: unless-stopped`` does: start again, after ``delay``, whatever exits.

        Run it in a thread for the duration of a test; it stops when ``stop`` is set.
        """
        while not stop.wait(0.2):
            for name, process in list(self.processes.items()):
                status = process.poll()
                if status is None or stop.is_set():
                    continue
                time.sleep(delay)
                self.restarts.setdefault(name, []).append(status)
                with contextlib.suppress(ProcessLookupError):  # the rest of its group, if any
                    os.killpg(process.pid, signal.SIGKILL)
                self._start(name, self.commands[name])

    def alive(self) -> dict[str, bool]:
        return {name: process.poll() is None for name, process in self.processes.items()}

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(
            f"===== {path.name}\n{path.read_text(errors='replace')[-6000:]}" for path in self.folder.glob("*.log")
        )

    def web_workers(self) -> int:
        return len(psutil.Process(self.processes["web"].pid).children())

    # -- readiness --------------------------------------------------------------------------------------
    def wait_for_web(self, timeout: float = 30) -> None:
        wait_until(lambda: self.http().get("/health")[0] == 200, timeout, "the web server to answer /health")

    def wait_for_worker(self, name: str, timeout: float = 30) -> None:
        celery = self.app.extensions["celery"]
        node = f"{name}@{HOST}"
        wait_until(lambda: celery.control.ping(destination=[node], timeout=0.5), timeout, f"worker {node}")

    def http(self) -> Client:
        return Client("127.0.0.1", self.web_port)


class Client:
    """A small JSON-over-HTTP client with keep-alive, and retries for what a load balancer would retry."""

    #: A kept-alive connection idle for longer than this is not used again: gunicorn closes it after its
    #: ``keepalive`` (5 s, deploy/gunicorn.conf.py), and a request sent as it does so is lost with it.
    IDLE_REUSE = 2.0

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.connection: http.client.HTTPConnection | None = None
        self.retried = 0
        self.used_at = 0.0

    def request(
        self, method: str, path: str, body: Any = None, token: str | None = None, retries: int = 0
    ) -> tuple[int, Any]:
        """``(status, JSON body or text)``. With ``retries``, a 5xx answer or a dropped connection is tried
        again (the caller makes that safe: reads, or steps with an idempotency key)."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = json.dumps(body) if body is not None else None
        for attempt in range(retries + 1):
            if self.connection is not None and time.monotonic() - self.used_at > self.IDLE_REUSE:
                self.close()
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.connection.request(method, path, body=payload, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                status = response.status
                self.used_at = time.monotonic()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == retries:
                    raise
                self.retried += 1
                time.sleep(0.2)
                continue
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            if status >= 500 and attempt < retries:
                self.retried += 1
                time.sleep(0.2)
                continue
            try:
                return status, json.loads(data)
            except ValueError:
                return status, data.decode(errors="replace")
        raise AssertionError("unreachable")

    def get(self, path: str, token: str | None = None, retries: int = 0) -> tuple[int, Any]:
        return self.request("GET", path, token=token, retries=retries)

    def post(self, path: str, body: Any, token: str | None = None, retries: int = 0) -> tuple[int, Any]:
        return self.request("POST", path, body=body, token=token, retries=retries)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = condition()
        except Exception:  # not up yet
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.1)


def confirm_by_mail(stack: Stack, client: Client, host_email: str, *, retries: int = 0) -> Any:
    """The host confirms their new game with the link of the mail that asks them to (ARCHITECTURE §9: only then go
    the invitations). The confirmation's answer."""
    base = re.escape(stack.env["SMALLWORLD_BASE_URL"])

    def asking(got: list[Any]) -> list[Any]:
        return [m for m in got if host_email in m.rcpt_tos and "Confirm your new game" in (m.headline)]

    [mail] = stack.smtp.mailbox.wait_for(asking, timeout=30)
    token = re.findall(base + r"/games/confirm/([A-Za-z0-9_\-.]+)", mail.text)[0]
    status, confirmed = client.post("/api/games/confirm", None, token=token, retries=retries)
    assert status == 200, confirmed
    return confirmed
