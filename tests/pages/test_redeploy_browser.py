"""The redeployment form cannot contradict itself (issue 35), in a real browser at 375 and 1280 px.

The counts stay within the troop's tokens as they are placed ("+" disabled once all are placed, a typed
count brought back), the map and each region's spoken name show the fields' spread as proposed until it is
saved, the instruction follows the state, and "End turn" appears by the one rule the page states: once every
token is on the map and saved. axe finds nothing serious on the form in either state.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game, reseed_new_game

from .axe import axe_violations
from .live import LiveServer
from .steps import game_state, play_randomly_until, settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}


def redeploying_with_tokens_in_hand(state: rules.GameState) -> bool:
    """Seat 0 redeploying its Active race, with tokens in hand and at least two regions to share them."""
    if state.over or state.phase != "redeploy" or state.current != 0:
        return False
    troop = state.players[0].active
    return troop is not None and troop.hand > 0 and len(state.regions_of(0, troop.race)) >= 2


def game_at_redeploy(live: LiveServer, label: str) -> tuple[int, str]:
    """A fixed-seed game played to seat 0's redeployment with tokens in hand; its id and seat 0's turn link."""
    links = live.app.extensions["smallworld.links"]
    for seed in range(1, 9):
        request = CreateGame.model_validate(
            {
                "name": f"Redeploy {label} {seed}",
                "players": [{"name": n, "email": f"{n.lower()}.{label}.{seed}@example.org"} for n in ("Ann", "Bob")],
                "settings": {"start_when_all_accepted": False},
            }
        )
        with Session(get_engine(live.app)) as session:
            game, _ = confirmed_game(session, request, links)
            game_id = game.id or 0
            reseed_new_game(session, game_id, f"redeploy-{seed}")
            seat = games.seats_of(session, game_id)[0][0]
            url = links.turn_url(game_id, 0, seat.secret, serial=0)
        if play_randomly_until(live.app, game_id, seed=seed, done=redeploying_with_tokens_in_hand):
            return game_id, url
    raise AssertionError("no seeded game came to a redeployment with tokens in hand")


def fields(form: Locator) -> list[Locator]:
    inputs = form.locator('input[type=number][id^="tokens-"]')
    return [inputs.nth(i) for i in range(inputs.count())]


def region_of(field: Locator) -> int:
    return int((field.get_attribute("id") or "").removeprefix("tokens-"))


def spare_then_other(form: Locator) -> tuple[Locator, Locator]:
    """A field that can give a token (the most above its least), and another field."""
    boxes = fields(form)
    spare = max(boxes, key=lambda f: int(f.input_value()) - int(f.get_attribute("min") or 0))
    return spare, next(f for f in boxes if f.get_attribute("id") != spare.get_attribute("id"))


def map_count(page: Page, region: int) -> Locator:
    return page.locator(f'[data-labels="{region}"] .chip .count')


def assert_map_agrees(page: Page, form: Locator, state: rules.GameState) -> None:
    """The map's counts and the regions' spoken names say what the fields say, proposed where not saved."""
    for field in fields(form):
        region = region_of(field)
        value = int(field.input_value())
        saved = state.regions[region].tokens
        expect(map_count(page, region)).to_have_text(str(value))
        link = page.locator(f"#turnmap-region-{region}")
        if value != saved:
            expect(map_count(page, region)).to_have_class(re.compile(r"\bchanged\b"))
            expect(link).to_have_attribute("aria-label", re.compile(rf"\b{value} tokens? proposed, {saved} saved\b"))
        else:
            expect(map_count(page, region)).not_to_have_class(re.compile(r"\bchanged\b"))
            expect(link).to_have_attribute("aria-label", re.compile(rf"\b{saved} tokens?(?! proposed)\b"))


def no_serious_axe(page: Page, name: str, size: dict[str, int], artifacts: Path) -> None:
    problems = axe_violations(page)
    page.screenshot(path=str(artifacts / f"redeploy-{name}-{size['width']}.png"), full_page=True)
    assert problems == [], f"{name} at {size['width']}px: {problems}"


@pytest.mark.parametrize("size", [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")])
def test_the_redeployment_form_cannot_contradict_itself(
    live: LiveServer, new_context: Any, size: dict[str, int], artifacts: Path
) -> None:
    game_id, url = game_at_redeploy(live, str(size["width"]))
    phone = size is PHONE
    page = new_context(viewport=size, is_mobile=phone, has_touch=phone).new_page()
    settled(page, lambda: page.goto(url))
    state = game_state(live, game_id)
    troop = state.players[0].active
    assert troop is not None and troop.hand > 0

    form = page.locator("form.redeploy", has=page.locator('input[id^="tokens-"]')).first
    count = int(form.get_attribute("data-count") or 0)
    placed = form.locator("[data-placed]")
    status = page.locator("#turn-status .next-step")
    end_turn = page.get_by_role("button", name="End turn…")
    rule = page.locator("#end-rule")

    # Tokens in hand: spread as a proposal, all placed, every "+" disabled; the map shows the proposal.
    expect(placed).to_have_text(str(count))
    expect(form.get_by_role("button", name=re.compile("One token more"))).to_have_count(len(fields(form)))
    for plus in form.get_by_role("button", name=re.compile("One token more")).all():
        expect(plus).to_be_disabled()
    assert_map_agrees(page, form, state)
    expect(status).to_contain_text("place your tokens in hand")
    expect(rule).to_have_text('"End turn" appears once every token is on the map and saved.')
    expect(end_turn).to_have_count(0)
    no_serious_axe(page, "proposed", size, artifacts)

    # A count typed past what is left comes back to it: never "Placed: 8 of 7".
    first, second = spare_then_other(form)
    first.fill(str(count + 5))
    expect(placed).to_have_text(str(count))
    assert sum(int(f.input_value()) for f in fields(form)) == count
    assert_map_agrees(page, form, state)

    # One fewer: one still to place, "+" enabled again; the map follows at once.
    form.get_by_role("button", name=re.compile(f"One token fewer on Region {region_of(first)} ")).click()
    expect(placed).to_have_text(str(count - 1))
    expect(form.locator(".placed")).to_contain_text("1 still to place")
    expect(
        form.get_by_role("button", name=re.compile(f"One token more on Region {region_of(second)} "))
    ).to_be_enabled()
    form.get_by_role("button", name=re.compile(f"One token more on Region {region_of(second)} ")).click()
    expect(placed).to_have_text(str(count))
    assert_map_agrees(page, form, state)

    # Saved: the instruction says every token is on the map, "End turn" appears, nothing is proposed.
    settled(page, lambda: form.get_by_role("button", name="Save this redeployment").click())
    state = game_state(live, game_id)
    troop = state.players[0].active
    assert troop is not None and troop.hand == 0
    form = page.locator("form.redeploy", has=page.locator('input[id^="tokens-"]')).first
    expect(status).to_contain_text("Every token is on the map")
    expect(end_turn).to_be_visible()
    assert_map_agrees(page, form, state)
    expect(page.locator(".board-map .count.changed")).to_have_count(0)

    # A change not saved: "End turn" waits and the instruction says why; put back, it returns.
    first, second = spare_then_other(form)
    form.get_by_role("button", name=re.compile(f"One token fewer on Region {region_of(first)} ")).click()
    form.get_by_role("button", name=re.compile(f"One token more on Region {region_of(second)} ")).click()
    expect(end_turn).to_be_hidden()
    expect(page.locator("[data-unsaved-note]")).to_be_visible()
    expect(status).to_contain_text("save this redeployment, or put them back")
    assert_map_agrees(page, form, state)
    no_serious_axe(page, "unsaved", size, artifacts)
    form.get_by_role("button", name=re.compile(f"One token fewer on Region {region_of(second)} ")).click()
    form.get_by_role("button", name=re.compile(f"One token more on Region {region_of(first)} ")).click()
    expect(end_turn).to_be_visible()
    expect(status).to_contain_text("Every token is on the map")
