"""The admin pages in a real browser (Debian's Chromium through Playwright) against a real HTTP server: the
host works the game's admin page with the keyboard only, scripts on (htmx) and under the Content Security
Policy, and a site admin signs in from the mailed link; screenshots at desktop and phone widths in
``tests/artifacts`` (``admin-*.png``) for a reader to look at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Page, expect
from sqlmodel import Session

from service.domain.models import SiteAdmin
from service.infra.db import get_engine
from tests.pages.conftest import artifacts, browser_type_launch_args, live  # noqa: F401  (fixtures)
from tests.pages.live import LiveServer

from .browsing import admin_path, new_game, turn_path


def watched(new_context: Any, width: int, height: int) -> tuple[Page, list[str]]:
    page = new_context(viewport={"width": width, "height": height}).new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def test_the_host_manages_the_game_with_the_keyboard(live: LiveServer, new_context: Any, artifacts: Path) -> None:  # noqa: F811
    game_id = new_game(live.app, name="Browser admin")
    page, errors = watched(new_context, 1280, 900)
    page.goto(live.url + admin_path(live.app, game_id))
    expect(page.get_by_role("heading", name="Manage Browser admin")).to_be_visible()
    page.screenshot(path=artifacts / "admin-game-1280.png", full_page=True)

    page.get_by_label("How much longer").focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("The deadline was moved; the player the game waits for was told.")

    page.get_by_label("Why (the players read it)").focus()
    page.keyboard.type("A keyboard pause")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Paused because")).to_be_visible()
    resume = page.get_by_role("button", name="Resume the game")
    for _ in range(30):  # Tab through the page to the button, as someone without a mouse does
        page.keyboard.press("Tab")
        if resume.evaluate("button => button === document.activeElement"):
            break
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("The game runs again")
    expect(page.locator("#log li")).to_have_count(3)

    phone, phone_errors = watched(new_context, 360, 740)
    phone.goto(live.url + admin_path(live.app, game_id))
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page is {width} px wide on a 360 px screen"
    phone.screenshot(path=artifacts / "admin-game-360.png", full_page=True)

    player, player_errors = watched(new_context, 1280, 900)
    player.goto(live.url + turn_path(live.app, game_id, 1))
    player.goto(f"{live.url}/games/{game_id}")
    expect(player.locator(".audit-log li").first).to_contain_text("The host resumed the game")
    assert not errors + phone_errors + player_errors, "errors in the browser console"


def test_a_site_admin_signs_in_from_the_mail_and_finds_the_game(
    live: LiveServer,  # noqa: F811
    new_context: Any,
    artifacts: Path,  # noqa: F811
) -> None:
    game_id = new_game(live.app, name="Found by admin")
    with Session(get_engine(live.app)) as session:
        session.add(SiteAdmin(email="root@example.org", secret="browser-test-secret"))
        session.commit()
    page, errors = watched(new_context, 1280, 900)
    page.goto(f"{live.url}/admin/login")
    page.get_by_label("Your email address").fill("root@example.org")
    page.get_by_role("button", name="Mail me a sign-in link").click()
    expect(page.get_by_role("status")).to_contain_text("If that address belongs to a site admin")
    [mail] = live.outbox("admin_login")
    page.goto(mail.context["login_url"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="All games")).to_be_visible()
    page.get_by_label("Player (part of a name or an email address)").fill("found-by-admin")
    page.get_by_role("button", name="Show the games").click()
    expect(page.locator("table.games-table tbody tr")).to_have_count(1)
    page.screenshot(path=artifacts / "admin-games-1280.png", full_page=True)
    page.get_by_role("link", name="Found by admin").click()
    expect(page.get_by_text("You manage this game as site admin root@example.org")).to_be_visible()
    assert page.url.endswith(f"/admin/games/{game_id}")
    assert not errors, "errors in the browser console"
