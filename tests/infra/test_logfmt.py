"""service.infra.logfmt: one line format for every process, and warnings that repeat logged once."""

from __future__ import annotations

import io
import logging
import re

from flask import Flask

from service.infra import logfmt
from service.infra.logfmt import RepeatFilter, bound, log

LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR|CRITICAL) (web|worker|beat)\[\d+\] \S+: .+"
)


def capture(name: str, role: str = "worker", repeats: RepeatFilter | None = None) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logfmt.use_line_format([handler], role)
    if repeats is not None:  # one with a clock of the test's own
        handler.filters = [repeats]
    logger = logging.getLogger(name)
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_a_line_says_when_in_utc_how_bad_which_process_and_which_game() -> None:
    logger, stream = capture("test.logfmt.line")
    log(logger, logging.WARNING, "mail.retry_later", outbox=3, game=12)
    with bound(game=7, task="sweep"):
        logger.error("celery's own line, inside a task about game 7")
    logger.info("a line about no game")
    lines = stream.getvalue().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    assert lines[0].endswith("test.logfmt.line: mail.retry_later outbox=3 game=12")  # game not said twice
    assert lines[1].endswith("inside a task about game 7 game=7")
    assert "game=" not in lines[2]
    assert " WARNING worker[" in lines[0] and " ERROR worker[" in lines[1] and " INFO worker[" in lines[2]


def test_a_traceback_follows_its_line() -> None:
    logger, stream = capture("test.logfmt.traceback", role="beat")
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("tick failed")
    first, *rest = stream.getvalue().splitlines()
    assert LINE.match(first) and first.endswith("tick failed") and " beat[" in first
    assert rest[0] == "Traceback (most recent call last):" and rest[-1] == "ValueError: boom"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_polled_every_few_seconds_is_logged_once_then_summed_up() -> None:
    clock = Clock()
    logger, stream = capture("test.logfmt.repeats", repeats=RepeatFilter(quiet=60, every=600, clock=clock))
    for attempt in range(1, 131):  # eleven minutes of "trying again" every 5 s, its numbers changing
        logger.error(
            "Cannot connect to redis://127.0.0.1:6379/0: refused. Trying again in 5.00 seconds... (%d/None)", attempt
        )
        logger.info("an info line always passes (%d)", attempt)
        clock.now += 5
    lines = stream.getvalue().splitlines()
    errors = [line for line in lines if " ERROR " in line]
    assert len(errors) == 2, errors  # the first, and one ten minutes later with the count of the others
    assert errors[0].endswith("(1/None)")
    assert errors[1].endswith("(121/None) (and 119 more like it in 590 s before this, not logged)")
    assert len([line for line in lines if " INFO " in line]) == 130


def test_the_same_warning_after_a_quiet_while_is_logged_again_with_what_was_left_out() -> None:
    clock = Clock()
    logger, stream = capture("test.logfmt.quiet", repeats=RepeatFilter(quiet=60, every=600, clock=clock))
    for _ in range(3):
        logger.warning("broker unreachable")
        clock.now += 1
    logger.warning("another kind of trouble")
    clock.now += 120
    logger.warning("broker unreachable")
    warnings = stream.getvalue().splitlines()
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "broker unreachable",
        "another kind of trouble",
        "broker unreachable (and 2 more like it in 1 s before this, not logged)",
    ]


def test_a_request_about_a_game_names_it_in_every_line_it_logs(app: Flask) -> None:
    logger, stream = capture("test.logfmt.web", role="web")

    @app.get("/test-logfmt/<int:game_id>")
    def about_a_game(game_id: int) -> str:
        logger.warning("something about this game")
        return "ok"

    assert app.test_client().get("/test-logfmt/41").status_code == 200
    logger.warning("after the request")
    first, after = stream.getvalue().splitlines()
    assert first.endswith("something about this game game=41") and " web[" in first
    assert "game=" not in after
