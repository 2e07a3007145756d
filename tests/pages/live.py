"""A real HTTP server running the app in a thread, for the browser tests, and what the tests ask of it.

The server is werkzeug's, threaded, on a free port, with its own instance folder (SQLite database, mail
folder). No Celery worker runs: :meth:`LiveServer.deliver_mail` does the worker's job on demand, through
the same domain operation (``service.domain.delivery.deliver_due_mail``) and the ``file`` mail backend, so
the mails land as ``.eml`` files that the mailbox page shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask
from sqlmodel import Session, select
from werkzeug.serving import WSGIRequestHandler, make_server

from emails.delivery import backend_from_config
from service import create_app
from service.domain import delivery
from service.domain.models import OutboxMail
from service.infra.db import get_engine, upgrade_database
from tests.processes import free_port


@dataclass
class LiveServer:
    url: str
    app: Flask

    def deliver_mail(self) -> int:
        """Send every mail due (what the worker does after each commit); how many were written."""
        with self.app.app_context():
            from service.infra.db import get_session

            report = delivery.deliver_due_mail(
                get_session(),
                backend_from_config(self.app.config),
                self.app.extensions["smallworld.links"],
                delivery.MailSettings.from_config(self.app.config),
            )
        return report.sent

    def outbox(self, template: str | None = None) -> list[OutboxMail]:
        with Session(get_engine(self.app)) as session:
            query = select(OutboxMail).order_by(OutboxMail.id)  # type: ignore[arg-type]
            if template:
                query = query.where(OutboxMail.template == template)
            return list(session.exec(query).all())

    def path(self, url: str) -> str:
        """A link from a mail as this server's address (links are absolute, from BASE_URL)."""
        assert url.startswith(self.url), url
        return url


class QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # the tests' output is for failures, not for every request


@contextmanager
def live_server(
    instance: Path, prepare: Callable[[Flask], None] | None = None, **settings: Any
) -> Iterator[LiveServer]:
    """The app on a free port; ``prepare`` changes it before it serves (e.g. adds a route that fails)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    app = create_app(
        {
            "INSTANCE_PATH": str(instance),
            "DATABASE_URL": f"sqlite:///{instance / 'smallworld.sqlite'}",
            "BROKER_URL": f"sqla+sqlite:///{instance / 'broker.sqlite'}",
            "MAIL_BACKEND": "file",
            "MAIL_DIR": str(instance / "mail"),
            "BASE_URL": url,
            "ENV": "development",
            **settings,
        }
    )
    upgrade_database(get_engine(app))
    if prepare is not None:
        prepare(app)
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield LiveServer(url=url, app=app)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        get_engine(app).dispose()
