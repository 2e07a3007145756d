"""A whole turn in Chromium as a keyboard user and as a phone user plays it, each step checked as they meet it.

- With the keyboard only (Tab, Shift+Tab, Enter, Space), at 1280 px and 375 px: after every step the focus
  is on the new status and the live region (``#announcer``) says it; the title says whose turn and which step.
- With taps at 375 px (a touch screen): the map comes first and fits the width; a tap on a region changes the
  board in place, leaving the page and the map's box (zoomed in) scrolled where they were; a region out of
  reach opens its panel with the rules' reason; tokens are moved on the map (a tap on one region, a tap on
  another) before saving.

Every step is kept as a screenshot in ``tests/artifacts/turn-<keys|taps>-<n>-<step>-<width>.png``.
"""

from __future__ import annotations

import re
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

from .live import LiveServer
from .steps import game_state, settled, tap_region

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
#: Powers that add a choice to every region (their conquests open the region's panel, not one tap).
MANY_CHOICES = {"Berserk", "Dragon Master"}


def new_game(live: LiveServer, name: str) -> tuple[int, str]:
    """A two-player game dealt from a fixed seed (the same every run); the first seat's turn link."""
    links = live.app.extensions["smallworld.links"]
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [
                {"name": n, "email": f"{n.lower()}.{name.split()[0].lower()}@example.org"} for n in ("Ann", "Bob")
            ],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        reseed_new_game(session, game_id, "turn-steps")
        seat = games.seats_of(session, game_id)[0][0]
        return game_id, links.turn_url(game_id, 0, seat.secret, serial=0)


def plain_combo(live: LiveServer, game_id: int) -> int:
    """A combo whose conquests are one tap each (see ``MANY_CHOICES``)."""
    state = game_state(live, game_id)
    return next(i for i, c in enumerate(state.combos[: state.players[0].coins + 1]) if c.power not in MANY_CHOICES)


def focused(page: Page) -> str:
    return str(
        page.evaluate("() => { const a = document.activeElement; return a ? a.id || a.outerHTML.slice(0, 80) : ''; }")
    )


def tab_to(page: Page, matches: str, backwards: bool = False, limit: int = 250) -> None:
    """Press Tab (or Shift+Tab) until the focused element matches the CSS selector ``matches``."""
    for _ in range(limit):
        if page.evaluate("s => !!document.activeElement && document.activeElement.matches(s)", matches):
            return
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
    raise AssertionError(f"Tab never reached {matches!r} (at {focused(page)})")


#: Where the focus goes after a step: where the next action is (issue 35).
ON_THE_MAP = ".turn-map a.region-link[tabindex='0']"
SAVE = "form.redeploy button[type=submit]"
END_TURN = "form:has(input[name=confirm][value=end_turn]) button"


def after_step(page: Page, said: str | re.Pattern[str], title: str, focus: str = "#turn-status") -> None:
    """The focus is where the next action is (``focus``), the live region says the new status, the title
    names the step."""
    expect(page.locator("#announcer")).to_contain_text(said)
    assert page.evaluate("s => document.activeElement.matches(s)", focus), focused(page)
    assert re.search(title, page.title()), page.title()


def shot(page: Page, artifacts: Path, number: int, step: str, size: dict[str, int]) -> None:
    how = "taps" if page.context.browser and size is PHONE and "Taps" in page.title() else "keys"
    page.screenshot(path=str(artifacts / f"turn-{how}-{number}-{step}-{size['width']}.png"))


@pytest.mark.parametrize("size", [pytest.param(DESKTOP, id="1280px"), pytest.param(PHONE, id="375px")])
def test_a_whole_turn_with_the_keyboard_only(
    live: LiveServer, new_context: Any, artifacts: Path, size: dict[str, int]
) -> None:
    game_id, turn_url = new_game(live, f"Keys {size['width']}")
    page = new_context(viewport=size).new_page()
    settled(page, lambda: page.goto(turn_url))
    assert re.search("Ann, your turn: picking a combo", page.title())
    shot(page, artifacts, 1, "pick", size)

    # Pick: Tab to the combo's button, Space.
    combo = plain_combo(live, game_id)
    tab_to(page, f".combo:nth-child({combo + 1}) button")
    settled(page, lambda: page.keyboard.press("Space"))
    after_step(page, "You picked the", "your turn: conquering", ON_THE_MAP)
    shot(page, artifacts, 2, "picked", size)

    # Conquer: Shift+Tab back to the map (it comes before the panel), to a region a tap conquers; Enter.
    tab_to(page, "a.region-link[data-action=conquer]", backwards=True)
    label = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert re.match(r"^[A-Z][a-z]+ \d+, .*costs \d+: conquer$", label), label
    target = int(page.evaluate("() => document.activeElement.dataset.region"))
    settled(page, lambda: page.keyboard.press("Enter"))
    after_step(page, f"Region {target} is yours", "your turn: conquering", ON_THE_MAP)
    assert game_state(live, game_id).regions[target].owner == 0
    assert page.evaluate("() => document.activeElement.dataset.region") == str(target)
    shot(page, artifacts, 3, "conquered", size)

    # End the conquests: Tab to the button, Space.
    tab_to(page, "form:has(input[name=type][value=end_conquest]) button")
    settled(page, lambda: page.keyboard.press("Space"))
    after_step(page, "Conquests over", "your turn: redeploying", SAVE)
    shot(page, artifacts, 4, "redeploy", size)

    # Save the redeployment as offered: Space.
    tab_to(page, "form.redeploy button[type=submit]")
    settled(page, lambda: page.keyboard.press("Space"))
    after_step(page, "Redeployment saved", "your turn: redeploying", END_TURN)

    # End the turn: the confirmation (a button: Space presses it), then Enter on "Yes, end my turn".
    tab_to(page, "form:has(input[name=confirm][value=end_turn]) button")
    settled(page, lambda: page.keyboard.press("Space"))
    # The confirmation is focused and in view, the live region says what to do.
    expect(page.locator("#announcer")).to_contain_text("Confirm below to end the turn")
    assert re.search("your turn: confirm the end of the turn", page.title()), page.title()
    confirmation = page.locator(".confirm")
    expect(confirmation).to_be_focused()
    expect(confirmation).to_be_in_viewport(ratio=1)
    expect(confirmation).to_contain_text("You will score")
    shot(page, artifacts, 5, "confirm", size)
    tab_to(page, "form:has(input[name=type][value=end_turn]) button.primary")
    settled(page, lambda: page.keyboard.press("Enter"))
    # The game page from its top, the focus on what the step did, the live region says it.
    expect(page.locator("#announcer")).to_contain_text("Turn ended")
    ended = page.locator("#main .message-done")
    expect(ended).to_contain_text("Turn ended")
    expect(ended).to_be_focused()
    expect(ended).to_be_in_viewport(ratio=1)
    assert page.evaluate("() => window.scrollY") == 0
    assert game_state(live, game_id).current == 1
    shot(page, artifacts, 6, "ended", size)


SCROLLS = """() => { const b = document.querySelector('[data-map-scroll]');
                        return [window.scrollY, b.scrollLeft, b.scrollTop]; }"""


def test_a_whole_turn_with_taps_on_a_phone(live: LiveServer, new_context: Any, artifacts: Path) -> None:
    game_id, turn_url = new_game(live, "Taps phone")
    size = PHONE
    page = new_context(viewport=size, is_mobile=True, has_touch=True).new_page()
    settled(page, lambda: page.goto(turn_url))

    # The map comes first, from edge to edge, and the page is no wider than the screen.
    box = page.locator("[data-map-scroll]")
    frame = box.bounding_box()
    assert frame is not None and frame["x"] == 0 and frame["width"] == size["width"], frame
    assert page.locator(".turn-map").bounding_box()["y"] < page.locator(".turn-actions").bounding_box()["y"]  # type: ignore[index]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]

    combo = plain_combo(live, game_id)
    settled(page, lambda: page.locator(f".combo:nth-child({combo + 1}) button").tap())
    after_step(page, "You picked the", "your turn: conquering", ON_THE_MAP)

    # Zoom in (the map's own button), then tap a region: the board changes in place.
    page.get_by_role("button", name="Zoom in on the map").tap()
    page.get_by_role("button", name="Zoom in on the map").tap()
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    targets = page.locator("a.region-link[data-action=conquer]")
    assert targets.count() > 0
    link = targets.last
    link.scroll_into_view_if_needed()
    page.evaluate("() => window.scrollBy(0, 40)")
    point = link.evaluate(
        """a => { const box = a.getBoundingClientRect();
                  for (let n = 2; n <= 24; n *= 2) for (let i = 1; i < n; i++) for (let j = 1; j < n; j++) {
                    const x = box.left + box.width * i / n, y = box.top + box.height * j / n;
                    const hit = document.elementFromPoint(x, y);
                    if (hit && hit.closest('a.region-link') === a) return [x, y]; }
                  return null; }"""
    )
    before = page.evaluate(
        """() => { const b = document.querySelector('[data-map-scroll]');
                   return [window.scrollY, b.scrollLeft, b.scrollTop, b.style.getPropertyValue('--zoom')]; }"""
    )
    assert before[0] > 0 and before[1] + before[2] > 0, f"the page and the map are scrolled: {before}"
    target = int(link.get_attribute("data-region") or -1)
    shot(page, artifacts, 1, "zoomed", size)
    settled(page, lambda: page.touchscreen.tap(*point))
    after_step(page, f"Region {target} is yours", "your turn: conquering", ON_THE_MAP)
    after = page.evaluate(
        """() => { const b = document.querySelector('[data-map-scroll]');
                   return [window.scrollY, b.scrollLeft, b.scrollTop, b.style.getPropertyValue('--zoom')]; }"""
    )
    assert after == before, f"the page and the map moved: {before} → {after}"
    expect(page.locator(f"#turnmap-region-{target}")).to_have_attribute("aria-label", re.compile("Ann's"))
    shot(page, artifacts, 2, "conquered", size)

    # A region out of reach: its panel says why not, in the rules' words, and nothing was sent.
    state = game_state(live, game_id)
    far = int(page.locator("a.region-link[aria-label$=', details']").first.get_attribute("data-region") or -1)
    far_link = page.locator(f"#turnmap-region-{far}")
    with pytest.raises(rules.IllegalAction) as refusal:
        rules.apply(state, {"type": "conquer", "player": 0, "region": far})
    # It opens in place: no new page, the page and the map's box where they were, the focus in the panel.
    far_link.scroll_into_view_if_needed()
    address, serial = page.url, page.evaluate("() => document.querySelector('main').dataset.page")
    where = page.evaluate(SCROLLS)
    tap_region(page, far_link)
    expect(page.locator("#region-panel .why-not")).to_contain_text(str(refusal.value))
    assert page.evaluate("() => !!document.activeElement.closest('#region-panel')"), focused(page)
    assert page.evaluate(SCROLLS) == where and page.url == address
    assert page.evaluate("() => document.querySelector('main').dataset.page") == serial
    assert game_state(live, game_id).to_json() == state.to_json()
    shot(page, artifacts, 3, "why-not", size)
    page.locator("#region-panel").get_by_role("button", name="Close").tap()
    expect(page.locator("#region-panel")).to_have_count(0)
    expect(far_link).to_be_focused()

    # A second conquest, so that there are two regions to move tokens between.
    second = page.locator("a.region-link[data-action=conquer]").first
    settled(page, lambda: tap_region(page, second))
    expect(page.locator("#announcer")).to_contain_text("is yours")
    settled(page, lambda: page.get_by_role("button", name="End conquests and redeploy").tap())
    after_step(page, "Conquests over", "your turn: redeploying", SAVE)

    # Tap-to-move: a tap on a region with a token to spare, a tap on another; the number boxes follow.
    inputs = page.locator("form.redeploy input[type=number]")
    values = {inputs.nth(i).get_attribute("id"): int(inputs.nth(i).input_value()) for i in range(inputs.count())}
    mins = {
        inputs.nth(i).get_attribute("id"): int(inputs.nth(i).get_attribute("min") or 0) for i in range(inputs.count())
    }
    source = next(f for f, v in values.items() if v > mins[f])
    sink = next(f for f in values if f != source)
    for field in (source, sink):
        region_link = page.locator(f"a.region-link[data-redeploy='{field}']")
        tap_region(page, region_link)
        if field == source:
            expect(page.locator("#announcer")).to_contain_text("Taking a token from")
            shot(page, artifacts, 4, "move-from", size)
    expect(page.locator("#announcer")).to_contain_text("One token moved")
    assert int(page.locator(f"#{source}").input_value()) == values[source] - 1
    assert int(page.locator(f"#{sink}").input_value()) == values[sink] + 1
    # The map shows the board as it will be, before it is saved.
    for field, value in ((source, values[source] - 1), (sink, values[sink] + 1)):
        chip = page.locator(f"[data-labels='{field.split('-')[1]}'] .chip:not(.declined) .count")
        expect(chip).to_have_text(str(value))
    shot(page, artifacts, 5, "moved", size)
    settled(page, lambda: page.get_by_role("button", name="Save this redeployment").tap())
    after_step(page, "Redeployment saved", "your turn: redeploying", END_TURN)
    state = game_state(live, game_id)
    assert state.regions[int(sink.split("-")[1])].tokens == values[sink] + 1

    settled(page, lambda: page.get_by_role("button", name="End turn…").tap())
    expect(page.locator(".confirm")).to_contain_text("You will score")
    shot(page, artifacts, 6, "confirm", size)
    settled(page, lambda: page.get_by_role("button", name="Yes, end my turn").tap())
    expect(page.locator("#announcer")).to_contain_text("Turn ended")
    # The game page from its top: what the turn scored is the first thing seen, and focused.
    expect(page.locator("#main .message-done")).to_be_focused()
    expect(page.locator("#main .message-done")).to_be_in_viewport(ratio=1)
    shot(page, artifacts, 7, "ended", size)


def test_two_fingers_zoom_the_map_inside_its_box(live: LiveServer, new_context: Any) -> None:
    """A pinch inside the map's box zooms the map (not the page); "Whole map" brings it back."""
    _, turn_url = new_game(live, "Pinch phone")
    page = new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    settled(page, lambda: page.goto(turn_url))
    box = page.locator("[data-map-scroll]")
    frame = box.bounding_box()
    assert frame is not None
    cx, cy = frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] / 2

    def finger(kind: str, pointer: int, x: float, y: float) -> None:
        box.evaluate(
            """(b, [kind, id, x, y]) => b.dispatchEvent(new PointerEvent(kind, { pointerType: 'touch',
                   pointerId: id, clientX: x, clientY: y, bubbles: true, isPrimary: id === 1 }))""",
            [kind, pointer, x, y],
        )

    finger("pointerdown", 1, cx - 20, cy)
    finger("pointerdown", 2, cx + 20, cy)
    for step in range(1, 4):
        finger("pointermove", 1, cx - 20 - 12 * step, cy)
        finger("pointermove", 2, cx + 20 + 12 * step, cy)
    finger("pointerup", 1, cx - 56, cy)
    finger("pointerup", 2, cx + 56, cy)
    zoom = float(box.evaluate("b => b.style.getPropertyValue('--zoom')") or 1)
    assert abs(zoom - 2.8) < 0.05, zoom  # the fingers went from 40 px apart to 112 px
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.get_by_role("button", name="Whole map").tap()
    assert float(box.evaluate("b => b.style.getPropertyValue('--zoom')")) == 1


def test_the_map_is_one_tab_stop_with_arrow_keys_between_its_regions(live: LiveServer, new_context: Any) -> None:
    """The map takes one Tab; the arrow keys move to the nearest region in their direction (Home and End to
    the first and last); Enter conquers; after it the focus is back on the map, so the next conquest is an
    arrow or two and Enter. "Skip to the map" and "Skip to the actions" lead there."""
    game_id, turn_url = new_game(live, "Arrows 1280")
    page = new_context(viewport=DESKTOP).new_page()
    settled(page, lambda: page.goto(turn_url))
    combo = plain_combo(live, game_id)
    page.locator(f".combo:nth-child({combo + 1}) button").focus()
    settled(page, lambda: page.keyboard.press("Space"))
    after_step(page, "You picked the", "your turn: conquering", ON_THE_MAP)

    # One tab stop: every other region is out of the Tab order, and Tab leaves the map at once.
    assert page.locator(".turn-map a.region-link[tabindex='0']").count() == 1
    assert page.locator(".turn-map a.region-link:not([tabindex='-1'])").count() == 1
    page.keyboard.press("Tab")
    assert not page.evaluate("() => !!document.activeElement.closest('.turn-map svg')"), focused(page)
    page.keyboard.press("Shift+Tab")
    start = page.evaluate("() => document.activeElement.dataset.region")
    assert start is not None, focused(page)

    # The arrows: to another region in that direction, each centre further that way; Home and End.
    def centre() -> tuple[float, float]:
        box = page.evaluate(
            "() => { const b = document.activeElement.querySelector('path.region').getBBox();"
            " return [b.x + b.width / 2, b.y + b.height / 2]; }"
        )
        return box[0], box[1]

    for key, axis, sign in (("ArrowRight", 0, 1), ("ArrowDown", 1, 1), ("ArrowLeft", 0, -1), ("ArrowUp", 1, -1)):
        before = centre()
        page.keyboard.press(key)
        after = centre()
        assert (after[axis] - before[axis]) * sign > 0, f"{key}: {before} → {after}"
        assert page.locator(".turn-map a.region-link[tabindex='0']").count() == 1
    page.keyboard.press("Home")
    assert page.evaluate("() => document.activeElement.dataset.region") == "0"
    last = page.locator(".turn-map a.region-link").count() - 1
    page.keyboard.press("End")
    assert page.evaluate("() => document.activeElement.dataset.region") == str(last)
    # The focused region is ringed (black outside, white inside: tests/web/maps/test_focus_ring.py).
    assert page.locator(".board-map .focus-ring path").count() == 2

    # Two conquests in a row: each from the region the focus is on, by arrows, with at most 3 key presses.
    for _ in range(2):
        state = game_state(live, game_id)
        targets = [int(a) for a in clickable_for_conquest_keys(page)]
        assert targets, "a conquest is offered"
        presses = walk_to_nearest(page, targets)
        target = int(page.evaluate("() => document.activeElement.dataset.region"))
        settled(page, lambda: page.keyboard.press("Enter"))
        assert presses + 1 <= 3, f"{presses} arrows and Enter"
        after_step(page, f"Region {target} is yours", "your turn: conquering", ON_THE_MAP)
        assert game_state(live, game_id).regions[target].owner == 0 != state.regions[target].owner

    # Enter on a region out of reach opens its panel in place, the focus in it; Escape closes it and puts the
    # focus back on the region.
    far = page.locator("a.region-link[aria-label$=', details']").first
    far.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#region-panel .why-not")).to_be_visible()
    assert page.evaluate("() => !!document.activeElement.closest('#region-panel')"), focused(page)
    page.keyboard.press("Escape")
    expect(page.locator("#region-panel")).to_have_count(0)
    expect(far).to_be_focused()

    # The skip links: the first Tab of the page's content, to the map and to the actions.
    page.evaluate("() => document.activeElement.blur()")
    page.locator("a[data-skip=map]").focus()
    expect(page.locator("a[data-skip=map]")).to_be_in_viewport()
    page.keyboard.press("Enter")
    assert page.evaluate("() => !!document.activeElement.closest('.turn-map svg')"), focused(page)
    page.locator("a[data-skip=actions]").focus()
    page.keyboard.press("Enter")
    assert page.evaluate("() => !!document.activeElement.closest('#actions')"), focused(page)


def clickable_for_conquest_keys(page: Page) -> list[str]:
    return list(page.locator("a.region-link[data-action=conquer]").evaluate_all("ls => ls.map(a => a.dataset.region)"))


def walk_to_nearest(page: Page, targets: list[int], limit: int = 4) -> int:
    """Arrow presses from the focused region to the nearest of ``targets`` (breadth first over the arrows);
    the focus ends there."""
    start = int(page.evaluate("() => document.activeElement.dataset.region"))
    if start in targets:
        return 0
    seen, frontier = {start: ()}, [start]
    for _ in range(limit):
        following = []
        for node in frontier:
            for key in ("ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"):
                page.locator(f"#turnmap-region-{node}").focus()
                page.keyboard.press(key)
                reached = int(page.evaluate("() => document.activeElement.dataset.region"))
                if reached not in seen:
                    seen[reached] = (*seen[node], key)
                    following.append(reached)
                    if reached in targets:
                        page.locator(f"#turnmap-region-{reached}").focus()
                        return len(seen[reached])
        frontier = following
    raise AssertionError(f"no target within {limit} arrows of region {start}")
