"""The game page between turns (issue 35), in a real browser at 375 and 1280 px: it leads with the deadline,
the map and the story since your last turn; resigning, the calendars and the time zone come after them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game, reseed_new_game

from .axe import axe_violations
from .live import LiveServer
from .steps import play_randomly_until, settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}


def top(page: Page, selector: str) -> float:
    return float(page.locator(selector).first.evaluate("el => el.getBoundingClientRect().top + scrollY"))


@pytest.mark.parametrize("size", [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")])
def test_between_turns_the_game_page_leads_with_the_map_the_story_and_the_deadline(
    live: LiveServer, new_context: Any, size: dict[str, int], artifacts: Path
) -> None:
    links = live.app.extensions["smallworld.links"]
    request = CreateGame.model_validate(
        {
            "name": f"Between turns {size['width']}",
            "players": [
                {"name": n, "email": f"{n.lower()}.between.{size['width']}@example.org"} for n in ("Ann", "Bob")
            ],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        reseed_new_game(session, game_id, "between-turns")
        seat = games.seats_of(session, game_id)[0][0]
        url = links.turn_url(game_id, 0, seat.secret, serial=0)

    def bob_on_turn_two(state: rules.GameState) -> bool:
        return state.turn == 2 and state.current == 1 and state.phase in ("pick", "start")

    assert play_randomly_until(live.app, game_id, seed=2, done=bob_on_turn_two)
    phone = size is PHONE
    page = new_context(viewport=size, is_mobile=phone, has_touch=phone).new_page()
    settled(page, lambda: page.goto(url))
    assert page.url.endswith(f"/games/{game_id}"), "Ann's link lands on the game page while Bob plays"

    # The deadline, the map and (beside it on a desktop, under it on a phone) what happened since.
    expect(page.locator(".game-status .deadline, .game-status [data-countdown]").first).to_be_in_viewport()
    expect(page.locator(".game-map")).to_be_in_viewport()
    since = page.locator(".game-since")
    expect(since.get_by_role("heading", name="Since your last turn")).to_be_visible()
    assert since.locator("li").count() >= 1
    if not phone:
        expect(since).to_be_in_viewport()
    assert top(page, ".game-status") < top(page, ".game-map")
    if phone:
        # Under the map, before the players and the combos.
        assert top(page, ".game-map") < top(page, ".game-since") < top(page, ".game-players")
    else:
        assert top(page, ".game-since") < top(page, ".game-players"), "on a desktop the story is beside the map"
    # Leaving the game, the calendars and the time zone only after the map and the story.
    below = max(
        top(page, ".game-map") + page.locator(".game-map").bounding_box()["height"],  # type: ignore[index]
        top(page, ".game-since"),
    )
    for later in (".resign", ".calendar-links", ".time-zone-box"):
        assert top(page, later) > below, f"{later} comes after the map and the story"
        expect(page.locator(later)).not_to_be_in_viewport()

    problems = axe_violations(page)
    page.screenshot(path=str(artifacts / f"game-between-turns-{size['width']}.png"), full_page=True)
    assert problems == [], problems
