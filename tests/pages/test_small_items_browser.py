"""Finding 11's smaller items of issue 35 that a browser shows: the new-game form's rows named per row for a
screen reader, words that suit a mouse as well as a finger, and the phone's Legend toggle off the screen's
edge."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game, reseed_new_game

from .live import LiveServer
from .steps import play_randomly_until, settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}


def test_each_row_of_the_new_game_form_is_named_by_its_player(live: LiveServer, new_context: Any) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    settled(page, lambda: page.goto(f"{live.url}/games/new"))
    for row in range(5):
        expect(page.get_by_label(f"Player {row + 1} Name", exact=True)).to_have_attribute("id", f"name-{row}")
        expect(page.get_by_label(f"Player {row + 1} Email", exact=True)).to_have_attribute("id", f"email-{row}")
        expect(page.get_by_label(re.compile(rf"house bot plays this seat.*player {row + 1}$"))).to_have_count(1)


@pytest.fixture(scope="module")
def turn_link(live: LiveServer) -> str:
    """Seat 0's link, at the start of its second turn (regions to conquer, a map with regions held)."""
    links = live.app.extensions["smallworld.links"]
    request = CreateGame.model_validate(
        {
            "name": "Small items",
            "players": [{"name": n, "email": f"{n.lower()}.small@example.org"} for n in ("Ann", "Bob")],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        reseed_new_game(session, game_id, "small-items")
        seat = games.seats_of(session, game_id)[0][0]
        url = links.turn_url(game_id, 0, seat.secret, serial=0)

    def second_turn(state: rules.GameState) -> bool:
        return state.turn == 2 and state.current == 0 and state.phase == "start"

    assert play_randomly_until(live.app, game_id, seed=5, done=second_turn)
    return url


@pytest.mark.parametrize("size", [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")])
def test_the_turn_page_and_the_guide_say_choose_not_tap(
    live: LiveServer, new_context: Any, turn_link: str, size: dict[str, int]
) -> None:
    page = new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE).new_page()
    for url in (turn_link, f"{live.url}/how-to-play"):
        settled(page, lambda url=url: page.goto(url))
        words = page.locator("main").inner_text() + " ".join(
            page.locator("a.region-link").evaluate_all("links => links.map(a => a.getAttribute('aria-label'))")
        )
        assert not re.search(r"\b[Tt]ap\b", words), url


def test_the_phone_s_legend_toggle_keeps_off_the_screen_s_edge(new_context: Any, turn_link: str) -> None:
    page = new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    settled(page, lambda: page.goto(turn_link))
    toggle = page.locator(".turn-map .legend-box summary")
    toggle.scroll_into_view_if_needed()
    box = toggle.bounding_box()
    assert box is not None
    assert box["x"] >= 8 and box["x"] + box["width"] <= PHONE["width"] - 8, box
