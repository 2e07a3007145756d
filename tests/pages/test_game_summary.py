"""service.web.pages.game_summary: the deadline as the pages show it, from the clock at the request's time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from service.domain.clock import Clock
from service.web.pages.game_summary import deadline

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PARIS = ZoneInfo("Europe/Paris")


def test_the_deadline_and_its_time_left_are_the_clock_s_answers_at_the_time_given() -> None:
    clock = Clock().start_step(NOW, 48 * 3600)
    shown = deadline(clock, NOW + timedelta(hours=45, minutes=30), PARIS)
    assert shown == {
        "iso": "2026-03-03T12:00:00+00:00",
        "local": "Tuesday 3 March 2026, 13:00 CET (Europe/Paris)",
        "left": "2 hours 30 minutes left",
    }
    assert deadline(clock, NOW + timedelta(hours=49), PARIS)["left"] == "the deadline has passed"  # type: ignore[index]


def test_a_stopped_clock_shows_no_deadline() -> None:
    assert deadline(Clock().start_step(NOW, 3600).pause(NOW), NOW, PARIS) is None
    assert deadline(Clock(), NOW, PARIS) is None
