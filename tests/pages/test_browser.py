"""The pages in a real browser (Debian's Chromium through Playwright) against a real HTTP server.

A host creates a game; each player opens their links from the mails in the local mailbox, picks a combo,
conquers by clicking regions of the map (and with the keyboard), sees the rules' refusal, undoes,
redeploys with the steppers and ends the turn; the game page then shows the next player's turn. Then
screenshots of the turn page on the four boards, at desktop and phone widths, in ``tests/artifacts``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect
from sqlmodel import Session

import rules
from service.domain import games
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game

from .live import LiveServer
from .steps import (
    clickable_for_conquest,
    conquer_on_map,
    game_state,
    offered,
    open_mail_link,
    play_randomly_until,
    region,
    settled,
    unlabelled,
)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 360, "height": 740}

ANN, BOB = "ann@example.org", "bob@example.org"


@pytest.fixture
def page(new_context: Any) -> Iterator[Page]:
    """A desktop-sized page that fails the test on any console error (a refused script or style, a 404)."""
    context = new_context(viewport=DESKTOP)
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"errors in the browser console: {errors}"


def test_a_game_created_in_the_browser_and_each_player_s_first_turn_played_from_the_mails(
    live: LiveServer, page: Page
) -> None:
    # The host creates the game.
    settled(page, lambda: page.goto(f"{live.url}/games/new"))
    page.get_by_label("Name of the game").fill("Browser game")
    page.locator("#name-0").fill("Ann")
    page.locator("#email-0").fill(ANN)
    page.locator("#name-1").fill("Bob")
    page.locator("#email-1").fill(BOB)
    page.get_by_label("Your time zone").fill("Europe/Paris")
    page.get_by_label("Time for a turn, in hours").fill("24")
    assert unlabelled(page) == []
    settled(page, lambda: page.get_by_role("button", name="Create the game").click())
    # Nothing goes to the players until the host confirms the game by the link mailed to them.
    expect(page.get_by_role("heading", name="Check your mail to confirm Browser game")).to_be_visible()
    open_mail_link(page, live, ANN, "Confirm your new game", "games/confirm")
    assert unlabelled(page) == []
    # Ann hosts and plays: she takes her seat on confirming, its name asked here (issue 35).
    expect(page.get_by_label("Your name in this game")).to_have_value("Ann")
    settled(page, lambda: page.get_by_role("button", name="Confirm and send the invitations").click())
    expect(page.get_by_role("heading", name="Browser game is created")).to_be_visible()
    expect(page.locator("main").get_by_text("You have taken your own seat")).to_be_visible()
    assert "/admin/" in page.get_by_label("Admin link").input_value()
    invitations = live.outbox("invitation")
    game_id = invitations[-1].game_id
    assert game_id is not None
    assert [m.to_email for m in invitations if m.game_id == game_id] == [BOB], "no invitation to the host herself"

    # Bob accepts from his invitation (the link shows the invitation; its button accepts); the game
    # starts and Ann, seat 1, gets her turn by mail.
    open_mail_link(page, live, BOB, "invited", "invite")
    assert unlabelled(page) == []
    settled(page, lambda: page.get_by_role("button", name="Accept and take my seat").click())
    open_mail_link(page, live, ANN, "your turn", "play")
    expect(page.get_by_role("heading", name=re.compile("Your turn"))).to_be_visible()
    expect(page.locator(".deadline")).to_contain_text("(Europe/Paris)")

    # Ann: pick the first combo.
    settled(page, lambda: page.locator(".combo button").first.click())
    expect(page.locator("#announcer")).to_contain_text("You picked the")
    assert unlabelled(page) == []
    race = game_state(live, game_id).players[0].active.race

    # Conquer by clicking a region of the map: a region offered with its cost.
    targets = offered(page, "choice-conquer")
    assert targets, "a first conquest is offered"
    first = targets[0]
    conquer_on_map(page, first)
    expect(page.locator("#announcer")).to_contain_text(f"Region {first} is yours")
    expect(region(page, first)).to_have_attribute("aria-label", re.compile(f"Ann's {race}"))

    # Only legal targets act: every region a click conquers at once is offered.
    assert set(clickable_for_conquest(page)) <= set(offered(page, "choice-conquer"))
    # A region out of reach opens its panel, which says why not in the rules' own words; nothing is sent.
    state = game_state(live, game_id)
    # (Out of reach: not adjacent, or a Sea; with a power that reaches everywhere, the region just taken.)
    far = next((r for r in range(len(state.regions)) if r not in offered(page, "choice-conquer")), first)
    with pytest.raises(rules.IllegalAction) as refusal:
        rules.apply(state, {"type": "conquer", "player": 0, "region": far})
    region(page, far).click()  # the panel opens in place: no new page
    expect(page.locator("#region-panel .why-not")).to_have_text(re.compile(re.escape(str(refusal.value))))
    assert game_state(live, game_id).to_json() == state.to_json()

    # Undo takes the conquest back.
    settled(page, lambda: page.get_by_role("button", name="Undo your last step").click())
    expect(page.locator("#announcer")).to_contain_text("Undone: your last step")
    expect(region(page, first)).not_to_have_attribute("aria-label", re.compile("Ann's"))

    # Conquer again, once with the keyboard (Tab to the region, Enter) and once with the mouse.
    first = offered(page, "choice-conquer")[0]
    conquer_on_map(page, first, keyboard=True)
    expect(page.locator("#announcer")).to_contain_text(f"Region {first} is yours")
    second = offered(page, "choice-conquer")[0]
    conquer_on_map(page, second)
    expect(page.locator("#announcer")).to_contain_text(f"Region {second} is yours")

    # Redeploy with the steppers: one token moved from one region to the other.
    settled(page, lambda: page.get_by_role("button", name="End conquests and redeploy").click())
    # The Active race's own form (a power with pieces to place, Bivouacking say, has a form of its own).
    troop = page.locator("form.redeploy", has=page.locator('input[id^="tokens-"]')).first
    inputs = troop.locator('input[type=number][id^="tokens-"]')
    assert inputs.count() == 2
    count = int(troop.get_attribute("data-count") or 0)
    before = [int(inputs.nth(i).input_value()) for i in range(2)]
    assert sum(before) == count, "the tokens in hand start spread over the regions"
    # All placed, "+" waits until a token is taken from a region (issue 35: never more than the count).
    expect(troop.get_by_role("button", name=re.compile(f"One token more on Region {first} "))).to_be_disabled()
    troop.get_by_role("button", name=re.compile(f"One token fewer on Region {second} ")).click()
    troop.get_by_role("button", name=re.compile(f"One token more on Region {first} ")).click()
    expect(troop.locator("[data-placed]")).to_have_text(str(count))
    assert unlabelled(page) == []
    settled(page, lambda: page.get_by_role("button", name="Save this redeployment").click())
    expect(page.locator("#announcer")).to_contain_text("Redeployment saved")
    state = game_state(live, game_id)
    assert [state.regions[first].tokens, state.regions[second].tokens] == [before[0] + 1, before[1] - 1]

    # End the turn: the confirmation tells the turn's score (rules.turn_score).
    score = rules.turn_score(state, 0)
    settled(page, lambda: page.get_by_role("button", name="End turn…").click())
    expect(page.locator(".confirm")).to_contain_text(f"= {score['total']} coin")
    settled(page, lambda: page.get_by_role("button", name="Yes, end my turn").click())
    expect(page.locator("#announcer")).to_contain_text("Turn ended")
    # The game page, read-only, shows whose turn it is now.
    assert page.url.endswith(f"/games/{game_id}")
    expect(page.locator(".whose-turn")).to_have_text("Bob")
    expect(page.get_by_text("Bob is picking a combo")).to_be_visible()
    expect(page.locator(".players")).to_contain_text("hidden")  # Bob's coins

    # Bob's turn, from his mail: pick, conquer on the map, redeploy as offered, end the turn.
    open_mail_link(page, live, BOB, "your turn", "play")
    expect(page.get_by_role("heading", name=re.compile("Your turn"))).to_be_visible()
    settled(page, lambda: page.locator(".combo button").first.click())
    target = offered(page, "choice-conquer")[0]
    conquer_on_map(page, target)
    expect(page.locator("#announcer")).to_contain_text(f"Region {target} is yours")
    settled(page, lambda: page.get_by_role("button", name="End conquests and redeploy").click())
    settled(page, lambda: page.get_by_role("button", name="Save this redeployment").click())
    settled(page, lambda: page.get_by_role("button", name="End turn…").click())
    settled(page, lambda: page.get_by_role("button", name="Yes, end my turn").click())
    expect(page.get_by_text("Turn 2 of 10: Ann is")).to_be_visible()

    # The history replays the game step by step.
    settled(page, lambda: page.get_by_role("link", name="The whole history, with replay").click())
    expect(page.get_by_role("heading", name=re.compile("After step"))).to_be_visible()
    settled(page, lambda: page.get_by_role("link", name=re.compile("Ann picked combo 1")).click())
    expect(page.get_by_role("heading", name=re.compile("Ann picked combo 1"))).to_be_visible()
    expect(page.locator("#replay-region-0")).to_have_count(0)  # the replay's map is not clickable
    assert game_state(live, game_id).to_json()["rng"] not in page.content(), "the random generator stays secret"


BOARDS = [(2, "2-players"), (3, "3-players"), (4, "4-players"), (5, "5-players")]


def test_turn_page_screenshots_on_every_board(live: LiveServer, new_context: Any, artifacts: Path) -> None:
    """The turn page in the middle of a game on each board, desktop and phone; the files are kept for a
    reader to look at (``tests/artifacts/turn-<board>-<width>.png``)."""
    desktop = new_context(viewport=DESKTOP).new_page()
    phone = new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    links = live.app.extensions["smallworld.links"]
    names = ["Ann", "Bob", "Cyd", "Dee", "Eve"]
    for players, board in BOARDS:

        def ready(state: rules.GameState) -> bool:
            # Seat 1 (index 0) at the start of a turn from turn 3 on, with regions to conquer.
            return (
                state.turn >= 3
                and state.current == 0
                and state.phase == "start"
                and any(a.type == "conquer" for a in rules.legal_actions(state, 0))
            )

        # The games are random (their seed is secret): one that never gets there is played again.
        for attempt in range(5):
            request = CreateGame.model_validate(
                {
                    "name": f"Screenshots on the {board} board",
                    "players": [
                        {"name": n, "email": f"{n.lower()}.{board}.{attempt}@example.org"} for n in names[:players]
                    ],
                    "settings": {"start_when_all_accepted": False},
                }
            )
            with Session(get_engine(live.app)) as session:
                game, _ = confirmed_game(session, request, links)
                game_id = game.id or 0
                seat = games.seats_of(session, game_id)[0][0]
                turn_url = links.turn_url(game_id, 0, seat.secret, serial=0)
            if play_randomly_until(live.app, game_id, seed=players, done=ready):
                break
        else:
            raise AssertionError(f"{board}: five random games never came to the turn to show")
        for page, size, name in ((desktop, DESKTOP, "desktop"), (phone, PHONE, "phone")):
            settled(page, lambda page=page, url=turn_url: page.goto(url))
            expect(page.get_by_role("heading", name=re.compile("Your turn"))).to_be_visible()
            assert page.locator("a.region-link").count() == len(rules.load_board(board))
            assert page.locator(".target-outline").count() > 0, "the costs of the conquests are on the map"
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= size["width"], f"{board} {name}: the page is {width}px wide"
            path = artifacts / f"turn-{board}-{size['width']}x{size['height']}.png"
            page.screenshot(path=str(path), full_page=True)
            print(f"screenshot: {path}")


def test_a_whole_turn_works_without_javascript(live: LiveServer, new_context: Any) -> None:
    """Plain HTML forms that POST and redirect: the basic flow needs no script."""
    page = new_context(viewport=PHONE, java_script_enabled=False).new_page()
    request = CreateGame.model_validate(
        {
            "name": "No script",
            "players": [{"name": n, "email": f"{n.lower()}.noscript@example.org"} for n in ("Ann", "Bob")],
            "settings": {"start_when_all_accepted": False},
        }
    )
    links = live.app.extensions["smallworld.links"]
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        seat = games.seats_of(session, game_id)[0][0]
        turn_url = links.turn_url(game_id, 0, seat.secret, serial=0)

    page.goto(turn_url)
    page.locator(".combo button").first.click()
    expect(page.locator(".message-done")).to_contain_text("You picked the")
    # From the list of conquests.
    first = offered(page, "choice-conquer")[0]
    page.get_by_label("Conquer a region").select_option(str(first))
    page.get_by_role("button", name="Conquer", exact=True).click()
    expect(page.locator(".message-done")).to_contain_text(f"Region {first} is yours")
    # From the map: without a script a region opens its panel, whose button conquers it.
    second = offered(page, "choice-conquer")[0]
    region(page, second).click()
    expect(page.locator("#region-panel")).to_contain_text(f"Region {second}")
    page.get_by_role("button", name=f"Conquer region {second}", exact=True).click()
    expect(page.locator(".message-done")).to_contain_text(f"Region {second} is yours")
    page.get_by_role("button", name="End conquests and redeploy").click()
    page.get_by_role("button", name="Save this redeployment").click()
    expect(page.locator(".message-done")).to_contain_text("Redeployment saved")
    page.get_by_role("button", name="End turn…").click()
    page.get_by_role("button", name="Yes, end my turn").click()
    expect(page.get_by_text("Bob is picking a combo")).to_be_visible()
