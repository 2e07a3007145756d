"""service.drain.queue: the one leased drain's settings, claim, task body (ARCHITECTURE §6).

What a drain does with rows (claims, leases, outcomes, crashes) is tested through its two queues, mail and chat
notices, with real workers, SMTP servers and chats: ``tests/worker/test_outbox_*.py``, ``test_chat_leases.py``,
``tests/domain/test_chat_notices.py``. Here: what is the drain's alone.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from service import create_app
from service.domain import chat_notices, delivery
from service.drain.queue import Claims, DrainReport, DrainSettings, claim_statement, run_task


def test_each_queue_reads_its_settings_from_its_own_variables_in_one_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    for name, value in {
        "MAIL_MAX_ATTEMPTS": "5",
        "MAIL_RETRY_SECONDS": "30",
        "MAIL_LEASE_SECONDS": "45",
        "CHAT_MAX_ATTEMPTS": "3",
        "CHAT_RETRY_SECONDS": "90",
    }.items():
        monkeypatch.setenv(f"SMALLWORLD_{name}", value)
    config = create_app().config

    mail = delivery.MailSettings.from_config(config)
    chat = chat_notices.NoticeSettings.from_config(config)

    assert (mail.max_attempts, mail.retry_seconds, mail.lease_seconds) == (5, 30, 45.0)
    assert mail.sender == config["MAIL_FROM"] and mail.reply_domain == config["INBOUND_DOMAIN"]
    # Unset, the chat's lease keeps its own default: far longer than a batch of posts.
    assert (chat.max_attempts, chat.retry_seconds, chat.lease_seconds) == (3, 90, 1800.0)
    assert isinstance(mail, DrainSettings) and isinstance(chat, DrainSettings)


def test_each_queue_keeps_its_defaults_when_nothing_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    config = create_app().config

    mail = delivery.MailSettings.from_config(config)
    chat = chat_notices.NoticeSettings.from_config(config)

    assert (mail.max_attempts, mail.retry_seconds, mail.lease_seconds, mail.batch_size) == (12, 60, 20.0, 100)
    assert (chat.max_attempts, chat.retry_seconds, chat.lease_seconds, chat.batch_size) == (8, 60, 1800.0, 50)
    # A chat's outcome is committed before the next post; mail's every fraction of a second.
    assert (chat.record_seconds, mail.record_seconds) == (0, 0.2)


def test_a_retry_waits_twice_as_long_at_each_attempt_and_at_most_the_cap() -> None:
    settings = DrainSettings(retry_seconds=60, max_retry_seconds=3600)
    waits = [settings.retry_delay(attempts) for attempts in range(1, 9)]
    assert waits == [timedelta(seconds=s) for s in (60, 120, 240, 480, 960, 1920, 3600, 3600)]


#: A queue's table as the drain needs it.
_ROWS = sa.Table(
    "rows_to_send",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("status", sa.String),
    sa.Column("attempts", sa.Integer),
    sa.Column("next_attempt_at", sa.DateTime),
    sa.Column("claimed_by", sa.String),
    sa.Column("urgent", sa.Boolean),
)


def test_a_claim_skips_the_rows_another_drain_locks_on_postgresql_and_takes_the_queues_own_conditions() -> None:
    claims = Claims(_ROWS, "pending", "rows")
    statement = claim_statement(claims, "postgresql", 10, due=[_ROWS.c.urgent.is_(True)])
    on_postgresql = str(statement.compile(dialect=postgresql.dialect()))
    assert "FOR UPDATE SKIP LOCKED" in on_postgresql
    # The chosen rows are evaluated once (a CTE), then claimed: never more than a batch.
    assert on_postgresql.startswith("WITH due AS") and "LIMIT" in on_postgresql
    assert "rows_to_send.urgent IS true" in on_postgresql
    assert "RETURNING rows_to_send.id" in on_postgresql
    on_sqlite = str(claim_statement(claims, "sqlite", 10).compile(dialect=sqlite.dialect()))
    assert "FOR UPDATE" not in on_sqlite and "drain_holder_gone" in on_sqlite


def test_a_drains_task_logs_what_it_did_only_when_it_claimed_something(caplog: pytest.LogCaptureFixture) -> None:
    moved: list[object] = []

    def drained(now: object) -> DrainReport:
        moved.append(now)
        return DrainReport(claimed=3, sent=2, retried=1, batches=1, errors=["451 try later"])

    with caplog.at_level(logging.INFO, logger="service.drain.queue"):
        summary = run_task("rows", drained, "2026-03-03T12:00:00+00:00")
        assert run_task("rows", lambda now: DrainReport(), None) == {**DrainReport().__dict__, "errors": []}

    assert summary["sent"] == 2 and summary["errors"] == ["451 try later"]
    assert [str(at) for at in moved] == ["2026-03-03 12:00:00+00:00"]
    (line,) = [record.getMessage() for record in caplog.records]
    assert line.startswith("rows.drained") and "sent=2" in line and "retried=1" in line
