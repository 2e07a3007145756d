"""What one turn costs a player on the turn page: taps or key presses, scrolling, and whether the map and the
step's result are on screen together; how large the map's words are drawn.

    PYTHONPATH=. .venv/bin/python bench/turn_cost.py

The same scripted turn (a fixed seed) in Debian's Chromium (``/usr/bin/chromium``, Playwright), twice: on a
phone (375×812, touch, 2× pixels) with taps, and at 1280×800 with the keyboard only. The turn: pick a combo,
three conquests, one conquest with the die, save the redeployment as offered, end the turn. The conquests are
planned with the rules engine before the browser starts (the cheapest regions a tap conquers, such that the
die is offered after the third), so both runs take the same steps.

For each step it counts:

- **actions**: taps on the phone; at 1280 the key presses, found by pressing them: Tab or Shift+Tab
  (whichever is shorter) from where the focus is, and, once in the map, the arrow keys (a breadth-first walk
  over what each arrow does), then Enter or Space;
- **scroll**: the CSS pixels the player scrolls (the window and the map's box) to bring what they act on into
  view, then to read the step's result if it is not in view;
- **map+result**: whether, once the step is shown, the map and the step's result (or, for the pick, the next
  instruction) are both in the viewport without scrolling.

Then the map's labels (region numbers, token counts, race names, costs) as drawn at the default zoom right
after the pick: the smallest and the median height in CSS px, at both widths.

Targets (issue 35): 0 px of scrolling between steps on the phone after the pick; at most 3 key presses from
one conquest to the next; labels of at least 11 px.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, sync_playwright
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game, reseed_new_game
from tests.pages.live import LiveServer, live_server
from tests.pages.steps import Plan, plan_turn

CHROMIUM = os.environ.get("SMALLWORLD_TEST_CHROMIUM", "/usr/bin/chromium")
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}


# -- measuring in the browser -------------------------------------------------------------------------------
@dataclass
class Step:
    name: str
    actions: int = 0
    scroll: float = 0.0
    both_in_view: bool = False


@dataclass
class Run:
    width: int
    steps: list[Step] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    badges: list[float] = field(default_factory=list)


#: Where the window, the map's box and the phone's sheet of actions (if the page has one) are scrolled to.
SCROLLS = """() => { const b = document.querySelector('[data-map-scroll]');
    const s = document.querySelector('[data-sheet]');
    return [window.scrollX, window.scrollY, b ? b.scrollLeft : 0, b ? b.scrollTop : 0, s ? s.scrollTop : 0]; }"""

IN_VIEW = """(el) => { if (!el) return false;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    if (el.closest('svg')) {  // a region: its centre inside the map's box and the window
      const box = el.closest('[data-map-scroll]').getBoundingClientRect();
      if (!(cx >= Math.max(0, box.left) && cx <= Math.min(innerWidth, box.right)
            && cy >= Math.max(0, box.top) && cy <= Math.min(innerHeight, box.bottom))) return false;
      const hit = document.elementFromPoint(cx, cy);  // not under something laid over the map
      return !!hit && !!hit.closest('[data-map-scroll]');
    }
    const top = Math.max(0, r.top), bottom = Math.min(innerHeight, r.bottom);
    // Text: wholly in view (or the top of the viewport's height of it); a map: at least half of what is shown.
    if (el.matches('[data-map-scroll]')) return (bottom - top) >= Math.min(r.height, innerHeight) / 2;
    return r.top >= 0 && r.bottom <= innerHeight + 1 && r.left >= 0 && r.right <= innerWidth + 1; }"""

#: The map's words as drawn (CSS px): region numbers, counts, races, costs, markers; a badge's seat number or
#: "LT" apart, as ``badges`` (part of a picture whose shape and colour say the same).
LABEL_SIZES = """() => { const out = {words: [], badges: []};
    for (const t of document.querySelectorAll('.turn-map [data-map-scroll] svg .labels text')) {
      const s = getComputedStyle(t);
      if (s.display === 'none' || s.visibility === 'hidden' || !t.getClientRects().length) continue;
      out[t.closest('.badge') ? 'badges' : 'words'].push(parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
    }
    return out; }"""


def scrolled(page: Page, do: Callable[[], object]) -> float:
    """How far ``do`` scrolled the window and the map's box, in CSS px."""
    before = page.evaluate(SCROLLS)
    do()
    after = page.evaluate(SCROLLS)
    return float(sum(abs(a - b) for a, b in zip(after, before, strict=True)))


def changed(page: Page, do: Callable[[], object]) -> None:
    """Do something that shows a new page (or a swapped one) and wait until it is there."""
    before = page.evaluate("() => document.querySelector('main')?.dataset.page")
    do()
    page.wait_for_function(
        "b => { const m = document.querySelector('main'); return m && m.dataset.page !== b; }", arg=before
    )
    page.wait_for_timeout(150)  # the page's own scripts settle the focus and scroll after the swap


def region(page: Page, number: int) -> Locator:
    return page.locator(f"#turnmap-region-{number}")


def result_of(page: Page) -> Locator:
    """The step's result as the page shows it: the message it flashed."""
    return page.locator(".message").first


def finish(page: Page, step: Step, target: Locator | None = None) -> None:
    """Once the step is shown: are the map (or the region acted on) and the result both in view? If the
    result is not, the player scrolls to read it."""
    map_box = target if target is not None and target.count() else page.locator("[data-map-scroll]").first
    result = result_of(page)
    result_seen = result.count() > 0 and bool(result.evaluate(IN_VIEW))
    step.both_in_view = result_seen and map_box.count() > 0 and bool(map_box.evaluate(IN_VIEW))
    if result.count() and not result_seen:
        step.scroll += scrolled(page, lambda: result.scroll_into_view_if_needed())


# -- taps ----------------------------------------------------------------------------------------------------
TAP_POINT = """a => { const box = a.getBoundingClientRect();
    for (let n = 2; n <= 24; n *= 2) for (let i = 1; i < n; i++) for (let j = 1; j < n; j++) {
      const x = box.left + box.width * i / n, y = box.top + box.height * j / n;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      const hit = document.elementFromPoint(x, y);
      if (hit && hit.closest('a.region-link') === a) return [x, y]; }
    return null; }"""


#: Whether a button can be tapped where it is: its centre on screen and not under something else.
TAPPABLE = """el => { const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
    const hit = document.elementFromPoint(x, y);
    return !!hit && (hit === el || el.contains(hit)); }"""


def tap(page: Page, step: Step, target: Locator) -> None:
    """Tap ``target`` where it is seen, after bringing it into view (scrolling counted) if it is not."""
    if target.evaluate("el => !!el.closest('svg')"):
        point = target.evaluate(TAP_POINT)
        if point is None:
            step.scroll += scrolled(page, lambda: target.scroll_into_view_if_needed())
            point = target.evaluate(TAP_POINT)
        if point is None:  # the region is under a label or off the box: centre it in the box
            step.scroll += scrolled(
                page, lambda: target.evaluate("a => a.scrollIntoView({block: 'center', inline: 'center'})")
            )
            point = target.evaluate(TAP_POINT)
        assert point is not None, "no point of the region can be tapped"
        page.touchscreen.tap(point[0], point[1])
    else:
        if not target.evaluate(TAPPABLE):
            step.scroll += scrolled(page, lambda: target.scroll_into_view_if_needed())
        if not target.evaluate(TAPPABLE):
            step.scroll += scrolled(page, lambda: target.evaluate("el => el.scrollIntoView({block: 'center'})"))
        target.tap()
    step.actions += 1


# -- keys ----------------------------------------------------------------------------------------------------
FOCUSED = """() => { const a = document.activeElement;
    return a && a.dataset && a.dataset.region ? 'region-' + a.dataset.region : ''; }"""


def arrows_to(page: Page, number: int, limit: int = 12) -> int | None:
    """Arrow presses from the focused region to region ``number``, by a breadth-first walk over what each
    arrow key does (the page's own roving focus); None if the arrows do not move the focus."""
    start = page.evaluate(FOCUSED)
    if start == f"region-{number}":
        return 0
    seen = {start: 0}
    frontier = [start]
    for depth in range(1, limit + 1):
        following = []
        for node in frontier:
            for key in ("ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp"):
                region(page, int(node.split("-")[1])).focus()
                page.keyboard.press(key)
                reached = page.evaluate(FOCUSED)
                if reached and reached not in seen:
                    seen[reached] = depth
                    following.append(reached)
                    if reached == f"region-{number}":
                        region(page, number).focus()
                        return depth
        frontier = following
        if not frontier:
            break
    region(page, int(start.split("-")[1])).focus()
    return None


def keys_to(page: Page, target: Locator, number: int | None = None, limit: int = 250) -> int:
    """Key presses from the focus to ``target`` (a region is reached by Tab and then the arrows if the map
    has them): the shorter of going forwards or backwards. The focus ends on the target."""
    handle = page.evaluate_handle("() => document.activeElement")
    best: int | None = None
    for backwards in (False, True):
        page.evaluate(
            "el => { document.activeElement && document.activeElement.blur && document.activeElement.blur();"
            " if (el && el !== document.body && el.focus) el.focus({preventScroll: true}); }",
            handle,
        )
        presses = 0
        tried_arrows = False
        while presses < limit:
            if target.evaluate("el => el === document.activeElement"):
                break
            if number is not None and not tried_arrows and page.evaluate(FOCUSED):
                tried_arrows = True
                found = arrows_to(page, number)
                if found is not None:
                    presses += found
                    break
            page.keyboard.press("Shift+Tab" if backwards else "Tab")
            presses += 1
        if presses < limit and (best is None or presses < best):
            best = presses
    assert best is not None, "the keyboard never reaches the target"
    # Leave the focus on the target (the presses were counted; the walk itself is replayed by focusing it).
    target.focus()
    return best


def key(page: Page, step: Step, target: Locator, number: int | None = None, press: str = "Enter") -> None:
    # The keyboard's own scrolling (the browser brings the focus into view) is not the player's.
    step.actions += keys_to(page, target, number) + 1
    page.keyboard.press(press)


# -- the turn ------------------------------------------------------------------------------------------------
def new_game(live: LiveServer, seed: str) -> tuple[str, Plan]:
    """A two-player game dealt from ``seed``: the first seat's turn link, and the turn planned on it."""
    links = live.app.extensions["smallworld.links"]
    request = CreateGame.model_validate(
        {
            "name": "Turn cost",
            "players": [{"name": n, "email": f"{n.lower()}@example.org"} for n in ("Ann", "Bob")],
            "settings": {"start_when_all_accepted": False},
        }
    )
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        reseed_new_game(session, game.id or 0, seed)
        seat = games.seats_of(session, game.id or 0)[0][0]
        session.refresh(game)
        assert game.state is not None
        return str(links.turn_url(game.id or 0, 0, seat.secret, serial=0)), plan_turn(rules.read_state(game.state))


def play_turn(page: Page, url: str, plan: Plan, touch: bool, screens: Path | None = None) -> Run:
    run = Run(page.viewport_size["width"] if page.viewport_size else 0)

    def shot(step: Step) -> None:
        if screens is not None:
            screens.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screens / f"{run.width}-{len(run.steps)}-{step.name.replace(' ', '-')}.png"))

    changed(page, lambda: page.goto(url))

    def act(step: Step, target: Locator, number: int | None = None, press: str = "Enter") -> None:
        if touch:
            tap(page, step, target)
        else:
            key(page, step, target, number, press)

    pick = Step("pick")
    combo_button = page.locator(f".combo:nth-child({plan.combo + 1}) button")
    changed(page, lambda: act(pick, combo_button, press="Space"))
    finish(page, pick)
    shot(pick)
    run.steps.append(pick)
    sizes = page.evaluate(LABEL_SIZES)
    run.labels, run.badges = [float(s) for s in sizes["words"]], [float(s) for s in sizes["badges"]]

    for n, number in enumerate(plan.conquests, start=1):
        step = Step(f"conquest {n}")
        changed(page, lambda number=number, step=step: act(step, region(page, number), number))  # type: ignore[misc]
        finish(page, step, region(page, number))
        shot(step)
        run.steps.append(step)

    die = Step("die conquest")
    act(die, region(page, plan.die), plan.die)
    page.locator("#region-panel h3", has_text=f"Region {plan.die}").wait_for()
    page.wait_for_timeout(150)
    roll = page.locator("#region-panel").get_by_role("button", name=f"Roll the die for region {plan.die}", exact=False)
    changed(page, lambda: act(die, roll))
    finish(page, die, region(page, plan.die))
    shot(die)
    run.steps.append(die)

    save = Step("redeploy")
    changed(page, lambda: act(save, page.get_by_role("button", name="Save this redeployment").first, press="Space"))
    finish(page, save)
    shot(save)
    run.steps.append(save)

    end = Step("end turn")
    changed(page, lambda: act(end, page.get_by_role("button", name="End turn…"), press="Space"))
    changed(page, lambda: act(end, page.get_by_role("button", name="Yes, end my turn")))
    finish(page, end)
    shot(end)
    run.steps.append(end)
    return run


def table(runs: list[Run]) -> str:
    phone, desk = runs
    lines = [
        f"{'step':<14} | {'taps 375':>8} | {'scroll 375':>10} | {'map+result 375':>14} | "
        f"{'keys 1280':>9} | {'scroll 1280':>11} | {'map+result 1280':>15}",
        "-" * 99,
    ]
    for a, b in zip(phone.steps, desk.steps, strict=True):
        lines.append(
            f"{a.name:<14} | {a.actions:>8} | {a.scroll:>8.0f}px | {'yes' if a.both_in_view else 'no':>14} | "
            f"{b.actions:>9} | {b.scroll:>9.0f}px | {'yes' if b.both_in_view else 'no':>15}"
        )
    after_pick = phone.steps[1:]
    lines += [
        "-" * 99,
        f"{'total':<14} | {sum(s.actions for s in phone.steps):>8} | {sum(s.scroll for s in phone.steps):>8.0f}px | "
        f"{sum(s.both_in_view for s in phone.steps):>9} of {len(phone.steps)} | "
        f"{sum(s.actions for s in desk.steps):>9} | {sum(s.scroll for s in desk.steps):>9.0f}px | "
        f"{sum(s.both_in_view for s in desk.steps):>10} of {len(desk.steps)}",
        "",
        f"phone: scrolling between steps after the pick: {sum(s.scroll for s in after_pick):.0f} px (target 0)",
        "1280: key presses from one conquest to the next: "
        + ", ".join(str(s.actions) for s in desk.steps[2:4])
        + " (target at most 3)",
    ]
    for run in runs:
        if run.labels:
            lines.append(
                f"labels at {run.width} px after the pick: smallest {min(run.labels):.1f} px, median "
                f"{statistics.median(run.labels):.1f} px, {len(run.labels)} drawn (target at least 11)"
            )
        if run.badges:
            lines.append(
                f"badges' seat numbers at {run.width} px: smallest {min(run.badges):.1f} px, median "
                f"{statistics.median(run.badges):.1f} px, {len(run.badges)} drawn"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", default="turn-cost")
    parser.add_argument("--screens", type=Path, help="a folder for a screenshot after each step")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for size, touch in ((PHONE, True), (DESKTOP, False)):
            with live_server(Path(folder) / f"w{size['width']}") as live:
                options: dict[str, Any] = {"viewport": size}
                if touch:
                    options |= {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}
                context = browser.new_context(**options)
                page = context.new_page()
                url, plan = new_game(live, args.seed)
                print(f"{size['width']} px: combo {plan.combo}, conquests {plan.conquests}, die on region {plan.die}")
                runs.append(play_turn(page, url, plan, touch, args.screens))
                context.close()
        browser.close()
    print(table(runs))


if __name__ == "__main__":
    main()
