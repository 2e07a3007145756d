"""axe on the pages issue 35 added states to, at 375 and 1280 px (ARCHITECTURE §8): the host's confirm page
with their seat's name, the page after confirming, and the admin page warning of a reminder longer than a
turn. No serious or critical violation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlmodel import Session

from service.domain import lobby
from service.domain.schemas import CreateGame
from service.infra.db import get_engine

from .axe import axe_violations
from .live import LiveServer
from .steps import settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}


@pytest.mark.parametrize("size", [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")])
def test_the_confirm_page_with_the_host_s_seat_and_the_admin_warning_pass_axe(
    live: LiveServer, new_context: Any, size: dict[str, int], artifacts: Path
) -> None:
    links = live.app.extensions["smallworld.links"]
    width = size["width"]
    request = CreateGame.model_validate(
        {
            "name": f"Seated host {width}",
            "players": [{"name": n, "email": f"{n.lower()}.seated.{width}@example.org"} for n in ("Ann", "Bob")],
            "settings": {
                "turn_length_seconds": 12 * 3600,
                "reminders_before_seconds": [24 * 3600, 3600],
                "start_when_all_accepted": False,
            },
        }
    )
    with Session(get_engine(live.app)) as session:
        game = lobby.create_game(session, request, links)
        confirm_url = links.confirm_url(game.id or 0, game.admin_secret)
    page = new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE).new_page()

    def check(name: str) -> None:
        problems = axe_violations(page)
        page.screenshot(path=str(artifacts / f"{name}-{width}.png"), full_page=True)
        assert problems == [], f"{name} at {width}px: {problems}"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width

    settled(page, lambda: page.goto(confirm_url))
    expect(page.get_by_label("Your name in this game")).to_have_value("Ann")
    check("confirm-seated-host")
    settled(page, lambda: page.get_by_role("button", name="Confirm and send the invitations").click())
    expect(page.locator("main").get_by_text("You have taken your own seat")).to_be_visible()
    check("confirmed-seated-host")
    settled(page, lambda: page.get_by_role("link", name="Open the admin page").click())
    expect(page.locator("#reminder-warning")).to_contain_text("24 hours before the deadline is longer than a turn")
    check("admin-reminder-warning")
