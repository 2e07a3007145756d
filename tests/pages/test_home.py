"""Ways back in and spectators in a real browser (Debian's Chromium through Playwright), against a real HTTP
server that sends its mail over SMTP to a real server (aiosmtpd, tests/smtp.py), from which the test reads it.

A player signs in by mail from the home page, finds the game that waits for them first on My games and opens
its turn; a spectator opens the game's watch link and sees no private data; axe finds no serious or critical
violation on the new pages (home with its sign-in form, the sign-in pages, My games, the watch page and its
history, the list of public games, "mail me my links" and a game page refused with its form) at 375 px and
1280 px.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

import rules
from service.domain import admin, games, lobby, watching
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from tests.conftest import SERVICE_SETTINGS
from tests.factories import confirmed_game, reseed_new_game
from tests.smtp import SMTPServer

from .axe import axe_violations
from .live import LiveServer, live_server
from .steps import game_state, play_randomly_until, settled

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
SIZES = [pytest.param(PHONE, id="375px"), pytest.param(DESKTOP, id="1280px")]
NAMES = ("Ann", "Bob", "Cyd")
#: What a spectator must never be given: a seat's, an invitation's or the host's link, or an address.
PRIVATE = re.compile(r"/play/|/invite/|/admin/|/calendar/|/unsubscribe/|@example\.org")


def address(name: str) -> str:
    return f"{name.lower()}@example.org"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live server mailing over SMTP, with a public game in its third turn (a fixed seed) and a second game."""
    smtp = SMTPServer()
    smtp.start()
    try:
        with pytest.MonkeyPatch.context() as env:
            for name in SERVICE_SETTINGS:
                env.delenv(name, raising=False)
            # The limits on sign-in mails are the subject of tests/service/test_sign_in.py: here one browser
            # asks for several.
            limits = {"RATELIMIT_SIGN_IN": "100 per minute", "RATELIMIT_SIGN_IN_PER_ADDRESS": "100 per hour"}
            with live_server(tmp_path_factory.mktemp("home-instance"), **smtp.settings, **limits) as server:
                links = server.app.extensions["smallworld.links"]
                ids = []
                with Session(get_engine(server.app)) as session:
                    for name, players in (("Watched game", NAMES), ("Second game", ("Bob", "Ann"))):
                        request = CreateGame.model_validate(
                            {
                                "name": name,
                                "players": [{"name": n, "email": address(n)} for n in players],
                                "settings": {"start_when_all_accepted": False},
                            }
                        )
                        game, _ = confirmed_game(session, request, links)
                        ids.append(game.id or 0)
                        for seat, name in enumerate(players):  # Ann plays in Paris time
                            zone = "Europe/Paris" if name == "Ann" else None
                            lobby.accept_invitation(session, game.id or 0, seat, links, time_zone=zone)
                    reseed_new_game(session, ids[0], "watched")
                    watching.set_public(session, ids[0], admin.HOST, True)

                def mid_game(state: rules.GameState) -> bool:
                    return state.turn >= 3 and state.phase in ("start", "pick") and not state.over

                assert play_randomly_until(server.app, ids[0], seed=5, done=mid_game)
                server.deliver_mail()
                with Session(get_engine(server.app)) as session:
                    game = games.get_game(session, ids[0])
                    watch_url = watching.watch_url(game, links)
                yield {"live": server, "smtp": smtp, "game_id": ids[0], "watch_url": watch_url}
    finally:
        smtp.stop()


def on_turn(site: dict[str, Any]) -> str:
    """The name of the seat the watched game waits for."""
    return NAMES[min(rules.awaiting(game_state(site["live"], site["game_id"])))]


def sign_in_link(site: dict[str, Any], name: str) -> str:
    """Send the mail due, then read the newest sign-in mail to ``name`` from the SMTP server."""
    live: LiveServer = site["live"]
    smtp: SMTPServer = site["smtp"]
    before = len([r for r in smtp.mailbox.to(address(name)) if "sign-in link" in (r.headline)])
    live.deliver_mail()
    mails = smtp.mailbox.wait_for(
        lambda received: [r for r in received if address(name) in r.rcpt_tos and "sign-in link" in (r.headline)][
            before:
        ]
    )
    mail = mails[-1]
    found = re.findall(re.escape(live.url) + r"/sign-in/[A-Za-z0-9_\-.]+", mail.text)
    assert len(set(found)) == 1, "one link, and nothing else"
    assert not re.search(r"/(play|invite|admin|games)/", mail.text), "the sign-in mail holds no other link"
    return str(found[0])


def sign_in(page: Page, site: dict[str, Any], name: str) -> None:
    live: LiveServer = site["live"]
    settled(page, lambda: page.goto(f"{live.url}/"))
    page.get_by_label("Your email address").fill(address(name))
    settled(page, lambda: page.get_by_role("button", name="Mail me a sign-in link").click())
    expect(page.locator("main").get_by_role("status")).to_contain_text("If that address has games here")
    link = sign_in_link(site, name)
    settled(page, lambda: page.goto(link))
    expect(page.get_by_text(f"Sign in as {address(name)} in this browser?")).to_be_visible()
    settled(page, lambda: page.get_by_role("button", name="Sign in").click())
    expect(page.get_by_role("heading", name="My games", level=1)).to_be_visible()


def test_sign_in_by_mail_then_my_games_then_the_turn(site: dict[str, Any], new_context: Any) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    name = on_turn(site)
    sign_in(page, site, name)
    waiting = page.locator("section", has=page.get_by_role("heading", name=re.compile("Waiting for you")))
    expect(waiting.get_by_role("heading", name="Watched game")).to_be_visible()
    expect(waiting).to_contain_text(f"Your turn as {name}")
    expect(waiting.locator(".my-game-deadline")).to_contain_text("Your deadline")
    if name == "Ann":
        expect(waiting.locator(".my-game-deadline")).to_contain_text("(Europe/Paris)")
    if name in ("Ann", "Bob"):
        expect(page.get_by_role("heading", name="Second game")).to_be_visible()
    settled(page, lambda: waiting.get_by_role("link", name=re.compile("Play your turn")).first.click())
    expect(page.get_by_role("heading", name=re.compile("Your turn"))).to_be_visible()
    # Signing out ends the session: My games asks to sign in again.
    settled(page, lambda: page.goto(f"{site['live'].url}/me"))
    settled(page, lambda: page.get_by_role("button", name="Sign out", exact=True).click())
    settled(page, lambda: page.goto(f"{site['live'].url}/me"))
    expect(page.get_by_role("heading", name="Sign in to see your games")).to_be_visible()


def test_the_watch_link_shows_the_game_and_no_private_data(site: dict[str, Any], new_context: Any) -> None:
    page = new_context(viewport=DESKTOP).new_page()
    settled(page, lambda: page.goto(site["watch_url"]))
    expect(page.get_by_role("heading", name="Watched game", level=1)).to_be_visible()
    expect(page.locator(".board-map")).to_be_visible()
    expect(page.locator("table.players")).to_contain_text("hidden")
    hrefs = page.eval_on_selector_all("a[href], form[action]", "els => els.map(e => e.href || e.action)")
    assert hrefs and not [h for h in hrefs if PRIVATE.search(h)], hrefs
    assert not PRIVATE.search(page.content())
    coins = page.locator("table.players tbody tr td:last-child")
    assert coins.count() == 3 and all(coins.nth(i).inner_text() == "hidden" for i in range(3))
    # The public game is listed and watched without a link.
    settled(page, lambda: page.goto(f"{site['live'].url}/games/public"))
    settled(page, lambda: page.get_by_role("link", name="Watched game").click())
    expect(page.get_by_role("heading", name="Watched game", level=1)).to_be_visible()
    assert not PRIVATE.search(page.content())


def check(page: Page, name: str, size: dict[str, int], artifacts: Path) -> None:
    problems = axe_violations(page)
    page.screenshot(path=str(artifacts / f"axe-{name}-{size['width']}.png"), full_page=True)
    assert problems == [], f"{name} at {size['width']}px: {problems}"
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= size["width"], f"{name} at {size['width']}px: the page is {width}px wide"


def test_my_data_downloads_and_my_address_is_deleted_from_my_games(site: dict[str, Any], new_context: Any) -> None:
    """Dee, with a game of her own, signs in, downloads her data from My games, then deletes her address: the
    confirmation page's box must be ticked before its button does anything (service/domain/privacy.py)."""
    live: LiveServer = site["live"]
    links = live.app.extensions["smallworld.links"]
    with Session(get_engine(live.app)) as session:
        request = CreateGame.model_validate(
            {
                "name": "Dee's game",
                "players": [{"name": n, "email": address(n)} for n in ("Dee", "Eve")],
                "settings": {"start_when_all_accepted": False},
            }
        )
        game, _ = confirmed_game(session, request, links)
        lobby.accept_invitation(session, game.id or 0, 0, links)
    page = new_context(viewport=DESKTOP, accept_downloads=True).new_page()
    sign_in(page, site, "Dee")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download my data").click()
    assert download.value.suggested_filename.startswith("smallworld-my-data-")
    assert '"address": "dee@example.org"' in Path(download.value.path()).read_text()

    settled(page, lambda: page.get_by_role("link", name="Delete my address").click())
    expect(page.get_by_role("heading", name="Delete my address", level=1)).to_be_visible()
    page.get_by_role("button", name="Delete my address").click()  # the box is required: the browser stays
    expect(page.get_by_role("heading", name="Delete my address", level=1)).to_be_visible()
    expect(page.locator("main").get_by_role("alert")).to_have_count(0)  # nor did the server refuse it: not sent
    page.get_by_label("I understand: this cannot be undone.").check()
    settled(page, lambda: page.get_by_role("button", name="Delete my address").click())
    expect(page.get_by_role("heading", name="Your address is deleted")).to_be_visible()
    settled(page, lambda: page.goto(f"{live.url}/me"))
    expect(page.get_by_role("heading", name="Sign in to see your games")).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_the_new_pages_pass_axe(site: dict[str, Any], new_context: Any, size: dict[str, int], artifacts: Path) -> None:
    live: LiveServer = site["live"]
    page = new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE).new_page()

    def visit(name: str, url: str) -> None:
        settled(page, lambda: page.goto(url))
        check(page, name, size, artifacts)

    visit("home-sign-in", f"{live.url}/")
    visit("sign-in", f"{live.url}/sign-in")
    page.get_by_label("Your email address").fill("not an address")
    page.locator("input[type=email]").evaluate("el => el.type = 'text'")  # let the server refuse it
    settled(page, lambda: page.get_by_role("button", name="Mail me a sign-in link").click())
    expect(page.locator("main").get_by_role("alert")).to_contain_text("Your email address")
    check(page, "sign-in-refused", size, artifacts)
    page.get_by_label("Your email address").fill(address("Cyd"))
    settled(page, lambda: page.get_by_role("button", name="Mail me a sign-in link").click())
    check(page, "sign-in-sent", size, artifacts)
    visit("sign-in-link", sign_in_link(site, "Cyd"))
    settled(page, lambda: page.get_by_role("button", name="Sign in").click())
    check(page, "my-games", size, artifacts)
    visit("delete-my-address", f"{live.url}/me/delete")
    visit("privacy", f"{live.url}/privacy")
    visit("watch", site["watch_url"])
    visit("watch-history", f"{site['watch_url']}/history")
    visit("public-games", f"{live.url}/games/public")
    visit("game-refused", f"{live.url}/games/{site['game_id']}")
    page.get_by_label("Your email address").fill(address("Cyd"))
    settled(page, lambda: page.get_by_role("button", name="Mail me my links").click())
    expect(page.locator("main").get_by_role("status")).to_contain_text("If that address has a seat in this game")
    check(page, "links-sent", size, artifacts)
