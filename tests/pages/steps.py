"""What a player does in the browser, for the browser tests (Playwright's sync API)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask
from playwright.sync_api import Locator, Page, expect
from sqlmodel import Session

import rules
from rules.bots import random_action
from service.domain import play
from service.domain.models import Game
from service.infra.db import get_engine

from .live import LiveServer


def settled(page: Page, do: Callable[[], object]) -> None:
    """Do something that loads a new page (a link, a form, htmx or not) and wait until it is shown.

    Every page carries a fresh ``data-page`` on its ``<main>``: the new page is there when it changed.
    """
    before = page.evaluate("() => document.querySelector('main')?.dataset.page")
    do()
    page.wait_for_function(
        "before => { const m = document.querySelector('main'); return m && m.dataset.page !== before; }",
        arg=before,
    )


def open_mail_link(page: Page, live: LiveServer, to: str, subject: str, kind: str) -> None:
    """Deliver the mail, open the newest mail to ``to`` whose subject has ``subject``, click its link."""
    live.deliver_mail()
    settled(page, lambda: page.goto(f"{live.url}/mailbox/?to={to}"))
    settled(page, lambda: page.locator("table.mails a", has_text=subject).first.click())
    settled(page, lambda: page.locator(f"pre.mail-text a[href*='/{kind}/']").first.click())


def unlabelled(page: Page) -> list[str]:
    """Controls a screen reader could not name: form fields without a label, buttons and links without
    words (the map's regions are links named by their description)."""
    return list(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('input, select, textarea, button, a[href]'))
                .filter(el => el.type !== 'hidden' && !el.closest('[hidden]'))
                .filter(el => {
                    if (el.getAttribute('aria-label')) return false;
                    if (el.labels && el.labels.length) return false;
                    return !(el.textContent || '').trim();
                })
                .map(el => el.outerHTML.slice(0, 120))"""
        )
    )


def region(page: Page, number: int, prefix: str = "turnmap") -> Locator:
    return page.locator(f"#{prefix}-region-{number}")


def conquer_on_map(page: Page, number: int, keyboard: bool = False) -> None:
    """Conquer a region from the map: one click (or Enter) when that is all the region offers, else the
    click opens the region's panel in place (a power offers something more there) and its Conquer button
    does it."""
    link = region(page, number)
    direct = link.get_attribute("data-action") == "conquer"
    if direct:
        press = (lambda: page.keyboard.press("Enter")) if keyboard else link.click
        if keyboard:
            link.focus()
        settled(page, press)
        return
    if keyboard:
        link.focus()
        page.keyboard.press("Enter")
    else:
        link.click()
    expect(page.locator("#region-panel h3")).to_have_text(f"Region {number}")
    settled(page, lambda: page.get_by_role("button", name=f"Conquer region {number}", exact=True).click())


def clickable_for_conquest(page: Page) -> list[int]:
    """The regions a click submits as a conquest at once (the rules then accept or refuse it)."""
    return [
        int(n)
        for n in page.locator("a.region-link[data-action=conquer]").evaluate_all(
            "links => links.map(a => a.dataset.region)"
        )
    ]


def offered(page: Page, select_id: str) -> list[int]:
    """The region numbers a region-choice list offers (e.g. ``choice-conquer``)."""
    return [int(v) for v in page.locator(f"#{select_id} option").evaluate_all("os => os.map(o => o.value)")]


def game_state(live: LiveServer, game_id: int) -> rules.GameState:
    with Session(get_engine(live.app)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None
        return rules.read_state(game.state)


def play_randomly_until(app: Flask, game_id: int, seed: int, done: Callable[[rules.GameState], bool]) -> bool:
    """Random legal steps through the domain operation (as the API would), until ``done(state)``; False if
    the game ended first."""
    rnd = random.Random(seed)
    links = app.extensions["smallworld.links"]
    with Session(get_engine(app)) as session:
        while True:
            game = session.get(Game, game_id)
            assert game is not None and game.state is not None
            session.refresh(game)
            state = rules.read_state(game.state)
            if done(state):
                return True
            if state.over:
                return False
            seat = min(rules.awaiting(state))
            action = random_action(state, seat, rnd).to_json()
            play.submit_action(session, game_id, seat, action, game.version, links)


def tap_region(page: Page, link: Locator) -> None:
    """Tap a region of the map where the region itself is under the finger (a region's box may be mostly
    its neighbours'), after bringing it into view as a player would."""
    link.scroll_into_view_if_needed()
    point = link.evaluate(
        """a => {
            const box = a.getBoundingClientRect();
            for (let n = 2; n <= 24; n *= 2)
              for (let i = 1; i < n; i++)
                for (let j = 1; j < n; j++) {
                  const x = box.left + (box.width * i) / n, y = box.top + (box.height * j) / n;
                  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
                  const hit = document.elementFromPoint(x, y);
                  if (hit && hit.closest('a.region-link') === a) return [x, y];
                }
            return null;
        }"""
    )
    assert point is not None, "no point of the region can be tapped"
    page.touchscreen.tap(point[0], point[1])


# -- a scripted turn (the browser tests of every state of the turn page, bench/turn_cost.py) ----------------
#: Powers that add a choice to every region (a tap opens the region's panel instead of conquering).
MANY_CHOICES = {"Berserk", "Dragon Master"}


@dataclass
class Plan:
    combo: int
    conquests: list[int]
    die: int


def plan_turn(state: rules.GameState) -> Plan:
    """The combo and regions of the scripted turn: a combo whose conquests are one tap each, three conquests
    of regions that offer nothing but a plain conquest (the cheapest first, then the lowest number), after
    which a conquest with the die is offered."""
    for combo, choice in enumerate(state.combos[: state.players[0].coins + 1]):
        if choice.power in MANY_CHOICES:
            continue
        picked = rules.apply(state, {"type": "pick", "player": 0, "combo": combo})
        found = _three_then_die(picked, [])
        if found is not None:
            return Plan(combo, found[:3], found[3])
    raise ValueError("no combo of this deal allows three conquests then the die: try another seed")


def _only(state: rules.GameState, kind: str) -> list[int]:
    """Regions whose one legal action is ``kind``, cheapest first."""
    by_region: dict[int, list[str]] = {}
    for action in rules.legal_actions(state, 0):
        if action.region is not None:
            by_region.setdefault(action.region, []).append(action.type)
    regions = [r for r, kinds in by_region.items() if kinds == [kind]]
    troop = state.players[0].active
    assert troop is not None
    return sorted(regions, key=lambda r: (rules.conquest_cost(state, 0, troop, r), r))


def _three_then_die(state: rules.GameState, done: list[int]) -> list[int] | None:
    if len(done) == 3:
        dice = _only(state, "final_conquest")
        return [*done, dice[0]] if dice else None
    for region in _only(state, "conquer"):
        after = rules.apply(state, {"type": "conquer", "player": 0, "region": region})
        found = _three_then_die(after, [*done, region])
        if found is not None:
            return found
    return None
