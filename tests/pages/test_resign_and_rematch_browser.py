"""Resigning and the rematch in a real browser (Debian's Chromium through Playwright) against a real HTTP
server (ARCHITECTURE §9): a player resigns from their game page after a confirmation, and everyone hears of it;
the host starts a rematch with one click on the finished game's page, and every player's invitation
arrives in the mailbox. The pages pass axe at phone and desktop widths."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import ConsoleMessage, Page, expect
from sqlmodel import Session, col, select

import rules
from service.domain import games, play, tally
from service.domain.models import AuditEntry, Game, GameStatus, Seat
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game
from tests.smtp import headline

from .live import LiveServer
from .steps import settled

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}


@pytest.fixture
def page(new_context: Any) -> Iterator[Page]:
    """A desktop-sized page that fails the test on any console error."""
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


def start(live: LiveServer, name: str, emails: list[str]) -> tuple[int, list[str]]:
    """A game started at once (its host the first player); its id and each seat's turn link."""
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": e.split("@")[0].capitalize(), "email": e} for e in emails],
            "settings": {"start_when_all_accepted": False},
        }
    )
    links = live.app.extensions["smallworld.links"]
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        return game.id or 0, [
            links.turn_url(game.id or 0, s.seat, s.secret, serial=0) for s, _ in games.seats_of(session, game.id or 0)
        ]


def finish(live: LiveServer, game_id: int) -> None:
    """Every step passed at its deadline, then the worker's tally, as the worker runs it."""
    links = live.app.extensions["smallworld.links"]
    with live.app.app_context(), Session(get_engine(live.app)) as session:
        for _ in range(500):
            game = session.get(Game, game_id, populate_existing=True)
            assert game is not None
            if game.status == GameStatus.ENDING:
                assert tally.tally_game(session, game_id)
                return
            play.auto_pass(session, game_id, min(rules.awaiting(play.load_state(game))), links)
    raise AssertionError("the game did not end")


def subjects_to(live: LiveServer, to: str) -> list[str]:
    folder = Path(live.app.config["MAIL_DIR"])
    found = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in folder.glob("*.eml")]
    return [headline(m) for m in found if to in str(m["To"])]


def serious(page: Page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes']]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def no_sideways_scroll(page: Page) -> bool:
    width = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return bool(width <= 0)


def test_a_player_resigns_from_the_game_page_after_confirming(live: LiveServer, page: Page) -> None:
    game_id, links = start(live, "Resigning game", ["ann.quit@example.org", "bob.quit@example.org"])
    settled(page, lambda: page.goto(links[1]))  # Bob opens his seat
    settled(page, lambda: page.goto(f"{live.url}/games/{game_id}"))
    settled(page, lambda: page.get_by_role("link", name="Resign from this game…").click())
    expect(page.get_by_role("heading", name="Resign from Resigning game?")).to_be_visible()
    expect(page.get_by_text("cannot be taken back")).to_be_visible()
    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        assert serious(page) == [], viewport
        assert no_sideways_scroll(page), viewport
    # Thinking better of it changes nothing.
    settled(page, lambda: page.get_by_role("link", name="Keep playing").click())
    expect(page.get_by_role("link", name="Resign from this game…")).to_be_visible()
    settled(page, lambda: page.get_by_role("link", name="Resign from this game…").click())
    settled(page, lambda: page.get_by_role("button", name="Resign from the game").click())
    expect(page.locator("#main .message-done")).to_contain_text("You resigned from the game. The other players")
    expect(page.get_by_text("You resigned from this game.", exact=True)).to_be_visible()
    assert serious(page) == []

    settled(page, lambda: page.goto(f"{live.url}/games/{game_id}/history"))
    expect(page.get_by_text("resigned from the game").first).to_be_visible()
    live.deliver_mail()
    assert any("a player resigned" in s for s in subjects_to(live, "ann.quit@example.org"))
    with Session(get_engine(live.app)) as session:
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 1)).one()
        assert seat.resigned_at is not None


def test_the_host_starts_a_rematch_with_one_click_and_every_player_is_invited(live: LiveServer, page: Page) -> None:
    emails = ["ann.again@example.org", "bob.again@example.org", "cat.again@example.org"]
    game_id, links = start(live, "Best of three", emails)
    finish(live, game_id)
    live.deliver_mail()
    settled(page, lambda: page.goto(links[0]))  # the host's seat
    settled(page, lambda: page.goto(f"{live.url}/games/{game_id}"))
    expect(page.get_by_role("heading", name="Final standings")).to_be_visible()
    expect(page.locator(".standings .record").first).to_contain_text("1 game")
    for viewport in (PHONE, DESKTOP):
        page.set_viewport_size(viewport)
        assert serious(page) == [], viewport
    settled(page, lambda: page.get_by_role("button", name="Rematch: invite the same players to a new game").click())
    expect(page.locator("#main .message-done")).to_contain_text("The rematch, Best of three (rematch), is on")
    expect(page.get_by_role("button", name="Rematch: invite the same players to a new game")).to_have_count(0)

    live.deliver_mail()
    for address in emails:
        invited = [s for s in subjects_to(live, address) if s.startswith("You are invited") and "(rematch)" in s]
        assert len(invited) == 1, (address, subjects_to(live, address))
    with Session(get_engine(live.app)) as session:
        [rematch] = session.exec(select(AuditEntry).where(AuditEntry.game_id == game_id, AuditEntry.act == "rematch"))
        new = session.get(Game, rematch.details["game"])
        assert new is not None and new.host_email == emails[0]
        assert [s.display_name for s, _ in games.seats_of(session, new.id or 0)] == [
            "Ann.again",
            "Bob.again",
            "Cat.again",
        ]
        assert session.exec(select(Game).where(col(Game.name) == "Best of three (rematch)")).one().id == new.id
