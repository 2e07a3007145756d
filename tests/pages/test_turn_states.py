"""Every state of the turn page (issue 35), at a phone's width (375 px, touch) and a desktop's (1280 px):

- axe finds no serious or critical violation in any of them: the pick, a conquest, a region's panel opened in
  place (one out of reach, one that needs the die), the redeployment, a refused step, the saved redeployment,
  the confirmation of the end of the turn, the game page after it, and the confirmation of going In Decline;
- each confirmation and result is seen and focused: in the viewport, with the focus on it or on the next
  action, and on a phone the map and the step's result share the screen;
- each state is saved as a screen in ``docs/screens/turn-<n>-<state>-<width>.png`` (the viewport as the
  player sees it, reduced to 64 colours), regenerated on every run.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Locator, Page, expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game, reseed_new_game

from .axe import axe_violations
from .live import LiveServer
from .steps import game_state, plan_turn, play_randomly_until, settled, tap_region

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
SCREENS = Path(__file__).resolve().parents[2] / "docs" / "screens"


def new_game(live: LiveServer, name: str) -> tuple[int, str]:
    """A two-player game dealt from a fixed seed (the one bench/turn_cost.py plays); Ann's turn link."""
    links = live.app.extensions["smallworld.links"]
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": n, "email": f"{n.lower()}.{name.split()[-1]}@example.org"} for n in ("Ann", "Bob")],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        reseed_new_game(session, game_id, "turn-cost")
        seat = games.seats_of(session, game_id)[0][0]
        return game_id, links.turn_url(game_id, 0, seat.secret, serial=0)


class States:
    """Checks each state of the page and saves its screen."""

    def __init__(self, page: Page, size: dict[str, int]) -> None:
        self.page, self.size, self.number = page, size, 0
        self.phone = size is PHONE

    def check(self, name: str) -> None:
        page = self.page
        page.wait_for_timeout(100)  # the page's script has placed the focus and the map
        problems = axe_violations(page)
        self.number += 1
        png = page.screenshot()
        SCREENS.mkdir(parents=True, exist_ok=True)
        path = SCREENS / f"turn-{self.number}-{name}-{self.size['width']}.png"
        Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64).save(path, optimize=True)
        assert problems == [], f"{name} at {self.size['width']}px: {problems}"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= self.size["width"]

    def act(self, target: Locator) -> None:
        if self.phone and target.evaluate("el => !!el.closest('svg')"):
            tap_region(self.page, target)
        elif self.phone:
            target.tap()
        else:
            target.click()

    def seen(self, what: Locator, focused: bool = True) -> None:
        """``what`` is wholly in the viewport, its top and its middle not under anything laid over it (the
        phone's sheet, the status that stays at the top of the actions), and focused."""
        expect(what).to_be_in_viewport(ratio=1)
        covered = what.evaluate(
            """el => { const r = el.getBoundingClientRect();
                return [[r.left + r.width / 2, r.top + 4], [r.left + r.width / 2, r.top + r.height / 2]]
                  .filter(([x, y]) => { const hit = document.elementFromPoint(x, y);
                                        return !hit || !(hit === el || el.contains(hit)); }); }"""
        )
        assert covered == [], f"{what} is under something at {covered}"
        if focused:
            expect(what).to_be_focused()

    def map_and_result_together(self) -> None:
        """On a phone: the step's result (in the sheet) and the map above it share the screen."""
        if not self.phone:
            return
        self.seen(self.page.locator("#turn-status .message").first, focused=False)
        box = self.page.locator("[data-map-scroll]").bounding_box()
        sheet = self.page.locator("[data-sheet]").bounding_box()
        assert box is not None and sheet is not None
        assert box["y"] >= -1 and sheet["y"] - box["y"] >= 300, (box, sheet)


@pytest.mark.parametrize("size", [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")])
def test_every_state_of_the_turn_page(live: LiveServer, new_context: Any, size: dict[str, int]) -> None:
    game_id, turn_url = new_game(live, f"States {size['width']}")
    plan = plan_turn(game_state(live, game_id))
    phone = size is PHONE
    page = new_context(viewport=size, is_mobile=phone, has_touch=phone).new_page()
    states = States(page, size)
    region = lambda n: page.locator(f"#turnmap-region-{n}")  # noqa: E731

    settled(page, lambda: page.goto(turn_url))
    states.check("pick")

    settled(page, lambda: states.act(page.locator(f".combo:nth-child({plan.combo + 1}) button")))
    expect(page.locator("#turn-status .message-done")).to_contain_text("You picked the")
    states.map_and_result_together()
    states.check("picked")

    for number in plan.conquests:
        settled(page, lambda number=number: states.act(region(number)))  # type: ignore[misc]
        expect(page.locator("#turn-status .message-done")).to_contain_text(f"Region {number} is yours")
        expect(region(number)).to_be_focused()  # the next action: the map, from where the player was
        states.map_and_result_together()
    states.check("conquered")

    # A region out of reach: its panel in place, the focus in it, the rules' reason.
    far = int(page.locator("a.region-link[aria-label$=', details']").first.get_attribute("data-region") or -1)
    states.act(region(far))
    expect(page.locator("#region-panel h3")).to_have_text(f"Region {far}")
    expect(page.locator("#region-panel .why-not")).to_be_visible()
    states.seen(page.locator("#region-panel").get_by_role("button", name="Close"))
    states.check("region-out-of-reach")
    states.act(page.locator("#region-panel").get_by_role("button", name="Close"))
    expect(page.locator("#region-panel")).to_have_count(0)

    # The die: the panel says the odds, its button rolls.
    states.act(region(plan.die))
    roll = page.locator("#region-panel").get_by_role("button", name=re.compile(f"Roll the die for region {plan.die}"))
    states.seen(roll)
    states.check("die-panel")
    settled(page, lambda: states.act(roll))
    expect(page.locator("#turn-status .message-done")).to_contain_text("The die rolled")
    save = page.locator("form.redeploy button[type=submit]").first
    states.seen(save)  # the next action: save the tokens as spread (or move them first)
    states.map_and_result_together()
    states.check("redeploy")

    # A refused step: one token too many placed; the refusal is seen and focused. The page's script brings a
    # count typed past the troop's tokens back down, so the count is set as a page without it would send it.
    field = page.locator("form.redeploy input[type=number]").first
    field.evaluate("(input, value) => { input.value = value; }", str(int(field.input_value()) + 1))
    settled(page, lambda: states.act(save))
    refusal = page.locator("#turn-status .message-refusal")
    expect(refusal).to_have_attribute("role", "alert")
    states.seen(refusal)
    states.check("refused")

    settled(page, lambda: states.act(page.locator("form.redeploy button[type=submit]").first))
    expect(page.locator("#turn-status .message-done")).to_contain_text("Redeployment saved")
    end = page.get_by_role("button", name="End turn…")
    states.seen(end)
    states.check("saved")

    settled(page, lambda: states.act(end))
    confirmation = page.locator(".confirm")
    states.seen(confirmation)
    states.seen(confirmation.get_by_role("button", name="Yes, end my turn"), focused=False)
    states.check("confirm-end")

    settled(page, lambda: states.act(confirmation.get_by_role("button", name="Yes, end my turn")))
    ended = page.locator("#main .message-done")
    expect(ended).to_contain_text("Turn ended")
    states.seen(ended)
    assert page.evaluate("() => window.scrollY") == 0
    states.check("game-page-after")

    # Ann's next turn: the confirmation of going In Decline.
    assert play_randomly_until(
        live.app, game_id, seed=1, done=lambda s: s.current == 0 and s.phase == rules.Phase.START
    )
    settled(page, lambda: page.goto(turn_url))
    settled(page, lambda: states.act(page.get_by_role("button", name="Go In Decline…")))
    decline = page.locator(".confirm")
    expect(decline).to_contain_text("In Decline?")
    states.seen(decline)
    states.seen(decline.get_by_role("button", name="Yes, go In Decline"), focused=False)
    states.check("confirm-decline")
