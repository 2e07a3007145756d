"""The embedded mode: ``smallworld worker`` on the SQLite broker consumes the mail queue and writes .eml files."""

from __future__ import annotations

import email
import email.policy
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask

from service.infra.broker import prepare_embedded_broker
from tests.processes import running
from tests.smtp import headline

pytestmark = pytest.mark.processes


def test_the_embedded_worker_writes_each_mail_as_an_eml_file(
    app_and_environment: Callable[..., tuple[Flask, dict[str, str]]], tmp_path: Path
) -> None:
    app, env = app_and_environment()  # no broker, database or mail settings: the embedded defaults
    prepare_embedded_broker(app.extensions["celery"])  # as `smallworld serve` does before its children start
    mail_dir = Path(app.config["MAIL_DIR"])
    log = tmp_path / "worker.log"
    with running(["worker", "--concurrency", "1"], env, log):
        body = {
            "name": "Embedded",
            "players": [{"name": "Ann", "email": "ann@example.org"}, {"name": "Bob", "email": "bob@example.org"}],
        }
        client = app.test_client()
        assert client.post("/api/games", json=body).status_code == 201

        def mail_files() -> list[Path]:
            # Not the hidden ".writing-….eml" a mail is written to before it takes its name: pathlib's "*"
            # matches it, and a mail read half written had no Subject (this test flaked so).
            return [p for p in mail_dir.glob("*.eml") if not p.name.startswith(".")]

        def written(count: int) -> list[email.message.EmailMessage]:
            deadline = time.monotonic() + 45
            while len(mail_files()) < count:
                if time.monotonic() > deadline:
                    print(log.read_text())
                    pytest.fail("the worker did not write the mails")
                time.sleep(0.1)
            paths = mail_files()
            return [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in paths]

        # The host confirms the game by the link of the first mail (ARCHITECTURE §9); then the others go.
        [request] = written(1)
        confirm = re.search(r"/games/confirm/(\S+)", request.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
        assert confirm, "the host's mail holds the link to confirm the game"
        assert client.post("/api/games/confirm", headers={"Authorization": f"Bearer {confirm[1]}"}).status_code == 200
        mails = written(4)  # and two invitations and the host's link
    assert sorted(headline(m) for m in mails) == [
        "Confirm your new game: Embedded",
        "Embedded: your host link",
        "You are invited to play Small World: Embedded",
        "You are invited to play Small World: Embedded",
    ]
    assert "mail.sent" in log.read_text()
