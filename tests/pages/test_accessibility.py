"""axe-core on every kind of page, at a phone's width (375 px) and a desktop's (1280 px): no serious or
critical violation (ARCHITECTURE §8). The pages: the lobby, the turn page in the middle of a game, the game page and
its history, the host's admin page, the "how a turn goes" page, the mailbox (list, mail, HTML view), a 404
and a 500, the last two in the site's layout with a viewport and a way home.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from playwright.sync_api import Page, expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.conftest import SERVICE_SETTINGS
from tests.factories import confirmed_game, reseed_new_game

from .axe import axe_violations
from .live import LiveServer, live_server
from .steps import play_randomly_until, settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
SIZES = [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")]


def _fail(app: Flask) -> None:
    def fail() -> str:
        raise RuntimeError("a fault on purpose, to see the 500 page")

    app.add_url_rule("/fault-on-purpose", "fault_on_purpose", fail)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live server with a game in its third turn (the same every run: a fixed seed), and its links."""
    with pytest.MonkeyPatch.context() as env:
        for name in SERVICE_SETTINGS:
            env.delenv(name, raising=False)
        with live_server(tmp_path_factory.mktemp("axe-instance"), prepare=_fail) as server:
            links = server.app.extensions["smallworld.links"]
            request = CreateGame.model_validate(
                {
                    "name": "Accessible game",
                    "players": [{"name": n, "email": f"{n.lower()}@example.org"} for n in ("Ann", "Bob", "Cyd")],
                    "settings": {"start_when_all_accepted": False},
                }
            )
            with Session(get_engine(server.app)) as session:
                game, admin_url = confirmed_game(session, request, links)
                game_id = game.id or 0
                reseed_new_game(session, game_id, "accessible")
                seats = games.seats_of(session, game_id)

            def mid_game(state: rules.GameState) -> bool:
                return state.turn >= 3 and state.phase in ("start", "pick") and not state.over

            assert play_randomly_until(server.app, game_id, seed=3, done=mid_game)
            server.deliver_mail()
            yield {
                "live": server,
                "game_id": game_id,
                "admin": admin_url,
                "turn": {seat.seat: links.turn_url(game_id, seat.seat, seat.secret, serial=0) for seat, _ in seats},
            }


def whose_turn(site: dict[str, Any]) -> int:
    from tests.pages.steps import game_state

    return min(rules.awaiting(game_state(site["live"], site["game_id"])))


def check(page: Page, name: str, size: dict[str, int], artifacts: Path) -> None:
    problems = axe_violations(page)
    page.screenshot(path=str(artifacts / f"axe-{name}-{size['width']}.png"), full_page=True)
    assert problems == [], f"{name} at {size['width']}px: {problems}"
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= size["width"], f"{name} at {size['width']}px: the page is {width}px wide"
    assert page.locator('meta[name="viewport"]').count() == 1
    expect(page.locator("footer").get_by_role("link", name="Home")).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_every_page_passes_axe(site: dict[str, Any], new_context: Any, size: dict[str, int], artifacts: Path) -> None:
    live: LiveServer = site["live"]
    game_id = site["game_id"]
    page = new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE).new_page()

    def visit(name: str, url: str) -> None:
        settled(page, lambda: page.goto(url))
        check(page, name, size, artifacts)

    visit("home", f"{live.url}/")
    visit("new-game", f"{live.url}/games/new")
    visit("how-to-play", f"{live.url}/how-to-play")
    visit("turn", site["turn"][whose_turn(site)])
    visit("game", f"{live.url}/games/{game_id}")
    visit("history", f"{live.url}/games/{game_id}/history")
    visit("admin", site["admin"])
    visit("mailbox", f"{live.url}/mailbox/")
    settled(page, lambda: page.locator("table.mails a", has_text="your turn").first.click())
    check(page, "mail", size, artifacts)
    # The mail's HTML as a mail client shows it: its own styles apply and its board picture loads.
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.get_by_role("link", name="HTML view").click()
    page.wait_for_load_state()
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") != "rgba(0, 0, 0, 0)"
    assert page.evaluate("() => document.querySelector('img.board').naturalWidth") > 0
    assert errors == [], f"refused by the page's policy: {errors}"
    problems = axe_violations(page)
    page.screenshot(path=str(artifacts / f"axe-mail-html-{size['width']}.png"), full_page=True)
    assert problems == [], f"the mail's HTML at {size['width']}px: {problems}"

    response = page.goto(f"{live.url}/no-such-page")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("There is no such page")
    check(page, "404", size, artifacts)

    response = page.goto(f"{live.url}/fault-on-purpose")
    assert response is not None and response.status == 500
    expect(page.get_by_role("heading", level=1)).to_have_text("Something went wrong on our side")
    check(page, "500", size, artifacts)
