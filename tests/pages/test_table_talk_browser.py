"""Table talk and mail choices in a real browser (Debian's Chromium through Playwright) against a real HTTP
server: a message written on the game page arrives by mail, in the game's thread, in the other player's
mailbox (the captured mailbox of the embedded mode: the ``file`` mail backend); a player changes their mail
choices from a mail's footer and the next mails follow them; the board and the page of choices pass axe at
phone and desktop widths."""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import ConsoleMessage, Page, expect
from sqlmodel import Session, select

from service.domain import games, table_talk
from service.domain.models import Game, Player
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.factories import confirmed_game
from tests.smtp import headline

from .live import LiveServer
from .steps import settled, unlabelled

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}


@pytest.fixture
def page(new_context: Any) -> Iterator[Page]:
    """A desktop-sized page that fails the test on any console error (but the refused message's own 400,
    which the browser logs as a resource that failed to load)."""
    context = new_context(viewport=DESKTOP)
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and "status of 400" not in message.text:
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"errors in the browser console: {errors}"


def start(live: LiveServer, name: str, emails: list[str]) -> tuple[int, list[str]]:
    """A game started at once; its id and each seat's turn link."""
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": e.split("@")[0].split(".")[0].capitalize(), "email": e} for e in emails],
            "settings": {"start_when_all_accepted": False},
        }
    )
    links = live.app.extensions["smallworld.links"]
    with Session(get_engine(live.app)) as session:
        game, _ = confirmed_game(session, request, links)
        return game.id or 0, [
            links.turn_url(game.id or 0, s.seat, s.secret, serial=0) for s, _ in games.seats_of(session, game.id or 0)
        ]


def mails_to(live: LiveServer, to: str) -> list[email.message.EmailMessage]:
    folder = Path(live.app.config["MAIL_DIR"])
    found = [
        email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in sorted(folder.glob("*.eml"))
    ]
    return [m for m in found if to in str(m["To"])]  # type: ignore[misc]


def serious(page: Page, context: str | None = None) -> list[str]:
    results = Axe().run(page, context=context)
    return [
        f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes']]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_a_message_written_on_the_page_arrives_by_mail_in_the_game_s_thread(live: LiveServer, page: Page) -> None:
    ann, bob = "ann.talk@example.org", "bob.talk@example.org"
    game_id, links = start(live, "Talking game", [ann, bob])
    live.deliver_mail()  # the turn mail of Ann, the first mail of the game's thread for her
    settled(page, lambda: page.goto(links[1]))  # Bob opens his seat
    settled(page, lambda: page.goto(f"{live.url}/games/{game_id}"))
    expect(page.get_by_role("heading", name="Table talk")).to_be_visible()
    page.get_by_label("Your message to the table").fill(
        "Good luck, **Ann**!\n- no mercy\n- see <https://example.org/rules>"
    )
    assert unlabelled(page) == []
    settled(page, lambda: page.get_by_role("button", name="Send to the table").click())
    board = page.locator("#table-talk")
    expect(board.locator(".talk-message")).to_have_count(1)
    expect(board.locator(".talk-text strong")).to_have_text("Ann")
    expect(board.locator(".talk-text a")).to_have_attribute("rel", "nofollow noopener noreferrer")

    assert live.deliver_mail() >= 1
    talk = [m for m in mails_to(live, ann) if "wrote at the table" in headline(m)]
    assert len(talk) == 1, [headline(m) for m in mails_to(live, ann)]
    assert not [m for m in mails_to(live, bob) if "wrote at the table" in headline(m)], "not to its writer"
    mail = talk[0]
    assert headline(mail) == "Talking game: Bob wrote at the table"
    assert str(mail["Subject"]) == "Small World: Talking game"
    turn = next(m for m in mails_to(live, ann) if "your turn" in headline(m).lower())
    assert mail["In-Reply-To"] == turn["In-Reply-To"] == mail["References"] == turn["References"]
    assert re.fullmatch(rf"<game-{game_id}\.\d+@[\w.-]+>", str(mail["In-Reply-To"]))
    text = mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert "Good luck, **Ann**!" in text and "- no mercy" in text
    html = mail.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert "<strong>Ann</strong>" in html

    # Ann reads it in the mailbox and opens her seat from it: the board shows the message to her too.
    settled(page, lambda: page.goto(f"{live.url}/mailbox/?to={ann}"))
    settled(page, lambda: page.locator("table.mails a", has_text="wrote at the table").first.click())
    expect(page.locator("pre.mail-text")).to_contain_text("Good luck, **Ann**!")
    settled(page, lambda: page.locator("pre.mail-text a[href*='/play/']").first.click())
    settled(page, lambda: page.goto(f"{live.url}/games/{game_id}"))
    expect(page.locator("#table-talk .talk-message")).to_contain_text("Good luck, Ann!")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["375px", "1280px"])
def test_the_board_has_no_serious_or_critical_accessibility_violation(
    live: LiveServer, page: Page, viewport: dict[str, int]
) -> None:
    game_id, links = start(
        live,
        f"Axe game {viewport['width']}",
        [f"a{viewport['width']}@example.org", f"b{viewport['width']}@example.org"],
    )
    page.set_viewport_size(viewport)
    settled(page, lambda: page.goto(links[0]))  # the host's seat: the hide buttons show too
    for target in (f"/games/{game_id}", f"/games/{game_id}/turn"):
        settled(page, lambda target=target: page.goto(f"{live.url}{target}"))
        page.get_by_label("Your message to the table").fill(
            "A *first* word with `code` and a [link](https://example.org)"
        )
        settled(page, lambda: page.get_by_role("button", name="Send to the table").click())
        expect(page.locator("#table-talk .talk-message").first).to_be_visible()
        assert serious(page) == [], target
    # A refused message: the page with the refusal passes too.
    page.get_by_label("Your message to the table").fill("x" * 2001)
    settled(page, lambda: page.get_by_role("button", name="Send to the table").click())
    expect(page.get_by_role("alert")).to_contain_text("at most 2,000 characters")
    assert serious(page) == []
    scroll = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert scroll <= 0, "the page does not scroll sideways"


def test_changing_the_mail_choices_from_a_mail_s_footer_and_the_next_mails_follow_them(
    live: LiveServer, page: Page
) -> None:
    ann, bob = "ann.choices@example.org", "bob.choices@example.org"
    game_id, links = start(live, "Choosy game", [ann, bob])
    live.deliver_mail()

    def ann_says(text: str) -> None:
        with Session(get_engine(live.app)) as session:
            game = session.get(Game, game_id)
            assert game is not None
            table_talk.post_message(session, game, 0, text)
        live.deliver_mail()

    def talk_to_bob() -> list[str]:
        return [
            m.get_body(("plain",)).get_content() for m in mails_to(live, bob) if "wrote at the table" in headline(m)
        ]  # type: ignore[union-attr]

    ann_says("First word")
    assert len(talk_to_bob()) == 1
    # Bob opens "Choose which mails you get" from the footer of that mail, in the mailbox.
    settled(page, lambda: page.goto(f"{live.url}/mailbox/?to={bob}"))
    settled(page, lambda: page.locator("table.mails a", has_text="wrote at the table").first.click())
    settled(page, lambda: page.locator("pre.mail-text a[href*='/choices/']").first.click())
    expect(page.get_by_role("heading", name="Which mails you get")).to_be_visible()
    assert unlabelled(page) == []
    page.get_by_label("Only my turns and the results").check()
    settled(page, lambda: page.get_by_role("button", name="Save my choices").click())
    expect(page.get_by_role("status")).to_contain_text("the next mails follow them")
    expect(page.get_by_label("Only my turns and the results")).to_be_checked()

    ann_says("Second word: not for Bob's inbox")
    assert len(talk_to_bob()) == 1, "only his turns and the results now"

    # Game by game: every event for this one, the rest as before.
    page.get_by_label("Choosy game").select_option("every")
    settled(page, lambda: page.get_by_role("button", name="Save my choices").click())
    ann_says("Third word")
    assert len(talk_to_bob()) == 2 and "Third word" in talk_to_bob()[-1]

    # Table talk off, as one kind: nothing more of it, whatever the game's choice.
    page.get_by_label("Table talk: what the other players write at the table").uncheck()
    settled(page, lambda: page.get_by_role("button", name="Save my choices").click())
    ann_says("Fourth word")
    assert len(talk_to_bob()) == 2


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["375px", "1280px"])
def test_the_page_of_choices_has_no_serious_or_critical_accessibility_violation(
    live: LiveServer, page: Page, viewport: dict[str, int]
) -> None:
    width = viewport["width"]
    game_id, _ = start(live, f"Axe choices {width}", [f"c{width}@example.org", f"d{width}@example.org"])
    with Session(get_engine(live.app)) as session:
        player = session.exec(select(Player).where(Player.email == f"d{width}@example.org")).one()
        url = live.app.extensions["smallworld.links"].choices_url(player.id or 0, serial=0)
    page.set_viewport_size(viewport)
    settled(page, lambda: page.goto(url))
    expect(page.get_by_label(f"Axe choices {width}")).to_be_visible()
    assert serious(page) == []
    page.get_by_role("button", name="Save my choices").scroll_into_view_if_needed()
    settled(page, lambda: page.get_by_role("button", name="Save my choices").click())
    expect(page.get_by_role("status")).to_be_visible()
    # The page says what was saved from its top, with the focus on those words (issue 35).
    saved = page.locator("#main .message").first
    expect(saved).to_be_focused()
    expect(saved).to_be_in_viewport(ratio=1)
    assert serious(page) == []
    scroll = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert scroll <= 0, "the page does not scroll sideways"
    assert game_id
