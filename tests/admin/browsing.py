"""What the admin page tests share: an app per test module, games to manage, and forms sent with their CSRF
token the way a browser sends them (read from the page first)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select

from service import create_app
from service.domain.models import AuditEntry, Game, OutboxMail, Seat
from service.domain.schemas import CreateGame
from service.infra.db import get_engine, upgrade_database
from tests.conftest import SERVICE_SETTINGS
from tests.factories import confirmed_game


@pytest.fixture(scope="module")
def admin_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app (SQLite) for a whole test module: each test makes games of its own."""
    with pytest.MonkeyPatch.context() as env:
        for name in SERVICE_SETTINGS:  # the developer's own settings stay out (as in tests/conftest.py)
            env.delenv(name, raising=False)
        instance = tmp_path_factory.mktemp("admin-instance")
        app = create_app({"TESTING": True, "INSTANCE_PATH": str(instance), "RATELIMIT_ENABLED": False})
        upgrade_database(get_engine(app))
        yield app
        get_engine(app).dispose()


def new_game(app: Flask, players: int = 3, name: str = "Admin test", start: bool = True, **settings: Any) -> int:
    """A game created as the lobby would, and confirmed by its host; started at once unless ``start`` is
    false. Player ``i`` is ``Player i`` at ``p<i>@<name>.example`` (addresses differ between games), and chose
    Europe/Paris as their time zone."""
    domain = re.sub(r"\W+", "-", name.lower()).strip("-")
    emails = [f"p{i}@{domain}.example" for i in range(players)]
    request = CreateGame.model_validate(
        {
            "name": name,
            "players": [{"name": f"Player {i}", "email": email} for i, email in enumerate(emails)],
            "settings": {"start_when_all_accepted": not start, **settings},
        }
    )
    with Session(get_engine(app)) as session:
        zones = dict.fromkeys(emails, "Europe/Paris")
        game, _ = confirmed_game(session, request, app.extensions["smallworld.links"], time_zones=zones)
        return game.id or 0


def path_of(app: Flask, url: str) -> str:
    return url.removeprefix(app.extensions["smallworld.links"].base_url)


def admin_path(app: Flask, game_id: int) -> str:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return path_of(app, app.extensions["smallworld.links"].admin_url(game_id, game.admin_secret))


def turn_path(app: Flask, game_id: int, seat: int) -> str:
    with Session(get_engine(app)) as session:
        row = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == seat)).one()
        return path_of(app, app.extensions["smallworld.links"].turn_url(game_id, seat, row.secret, serial=0))


def host(app: Flask, game_id: int) -> Any:
    """A browser that opened the game's admin link."""
    client = app.test_client()
    opened = client.get(admin_path(app, game_id))
    assert opened.status_code == 302 and opened.headers["Location"].endswith(f"/admin/games/{game_id}")
    return client


def submit(client: Any, page: str, action: str, **fields: Any) -> Any:
    """Send a form of ``page`` to ``action`` as a browser would: with the CSRF token and the hidden fields of
    that form as the page drew it, plus ``fields``. Returns the response to the POST."""
    shown = client.get(page)
    assert shown.status_code == 200, shown.text
    form = _form(shown.text, action)
    data = {**dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form)), **fields}
    return client.post(action, data={k: html.unescape(str(v)) for k, v in data.items()})


def _form(page: str, action: str) -> str:
    for match in re.finditer(r"<form\b[^>]*>.*?</form>", page, flags=re.S):
        if f'action="{action}"' in match.group(0):
            return match.group(0)
    raise AssertionError(f"the page has no form sending to {action}")


def act(client: Any, game_id: int, name: str, /, shown: str = "", **fields: Any) -> Any:
    """An act from the game's admin page (as drawn with the query ``shown``, e.g. ``?confirm=pass``);
    follows the redirect back to the page."""
    page = f"/admin/games/{game_id}"
    sent = submit(client, page + shown, f"{page}/{name}", **fields)
    assert sent.status_code == 303, sent.text
    return client.get(sent.headers["Location"])


def send(client: Any, game_id: int, name: str, /, **fields: Any) -> Any:
    """POST to an act the page does not offer now (a form drawn earlier, a crafted request), with this
    browser's CSRF token; follows the redirect back to the page."""
    page = client.get(f"/admin/games/{game_id}")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token, "the page has a form with a CSRF token"
    sent = client.post(f"/admin/games/{game_id}/{name}", data={"csrf_token": token.group(1), **fields})
    assert sent.status_code == 303, sent.text
    return client.get(sent.headers["Location"])


def messages(page: Any) -> list[str]:
    """The flashed messages a page shows: (category, words)."""
    # Refusals are alerts; the feedback of a step is read out by the page's one live region (data-announce).
    found = re.findall(
        r'<p class="message message-(\w+)" (?:role="\w+"|data-announce)>(.*?)</p>', page.text, flags=re.S
    )
    return [f"{category}: {html.unescape(words.strip())}" for category, words in found]


def audit_of(app: Flask, game_id: int) -> list[AuditEntry]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(AuditEntry).where(AuditEntry.game_id == game_id).order_by(AuditEntry.id)))


def mails_of(app: Flask, game_id: int | None, template: str) -> list[OutboxMail]:
    with Session(get_engine(app)) as session:
        query = select(OutboxMail).where(OutboxMail.template == template).order_by(OutboxMail.id)
        if game_id is not None:
            query = query.where(OutboxMail.game_id == game_id)
        return list(session.exec(query))


def stored(app: Flask, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game
