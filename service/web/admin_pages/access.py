"""Who may manage a game in this browser: its host (signed admin link) or a signed-in site admin (ARCHITECTURE §7).

Opening the host's admin link (``/admin/<token>``) stores ``{game id: admin secret}`` in the signed session
cookie, next to whatever seat the browser holds; a site admin's sign-in link stores the account and its
secret. Every admin page checks the stored secret against the database again, so a rotated secret ends the
right at once. A turn link (a seat in the session) gives no admin right at all.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from flask import session

from service.domain import admin, site_admins
from service.domain.models import Game, SiteAdmin
from service.infra.db import get_session
from service.web.pages.access import PageRefused, signed_in_as

#: Session keys: the games whose host link this browser opened, and the signed-in site admin.
HOST_GAMES = "host_games"
SITE_ADMIN = "site_admin"
#: How many games' host rights one browser keeps (the oldest are forgotten first).
MAX_HOST_GAMES = 20

OPEN_ADMIN_LINK = (
    "This page is for the game's host. Open the admin link from the mail you got when you created the game; "
    "site admins sign in first."
)


@dataclass(frozen=True)
class Manager:
    """The game being managed and who manages it (the actor of its audit entries)."""

    game: Game
    actor: admin.Actor
    site_admin: SiteAdmin | None

    @property
    def as_words(self) -> str:
        if self.site_admin is not None:
            return f"as site admin {self.site_admin.email}"
        return "as the game's host"


def remember_host(game: Game) -> None:
    kept = {k: v for k, v in (session.get(HOST_GAMES) or {}).items() if k != str(game.id)}
    kept[str(game.id)] = game.admin_secret
    session[HOST_GAMES] = dict(list(kept.items())[-MAX_HOST_GAMES:])
    session.permanent = True


def remember_site_admin(account: SiteAdmin) -> None:
    session[SITE_ADMIN] = site_admins.remembered(account)
    session.permanent = True


def forget_admin_rights() -> None:
    session.pop(SITE_ADMIN, None)
    session.pop(HOST_GAMES, None)


def signed_in_site_admin() -> SiteAdmin | None:
    """The site admin signed in in this browser, if their secret still matches."""
    return signed_in_as(SITE_ADMIN, site_admins.from_session)


def require_site_admin() -> SiteAdmin:
    account = signed_in_site_admin()
    if account is None:
        raise PageRefused("Sign in as a site admin first: ask for a sign-in link on the admin sign-in page.")
    return account


def manager_for(game_id: int) -> Manager:
    """Who manages game ``game_id`` in this browser, or :class:`PageRefused` (which tells nothing of the game).

    A site admin acts as themselves (the audit names them) even in a game whose host link they opened.
    """
    game = get_session().get(Game, game_id)
    account = signed_in_site_admin()
    if account is not None:
        if game is None:
            raise PageRefused(f"There is no game {game_id}.", status=404)
        return Manager(game=game, actor=admin.site_admin(account.email), site_admin=account)
    secret = (session.get(HOST_GAMES) or {}).get(str(game_id))
    if game is None or not isinstance(secret, str) or not secrets.compare_digest(secret, game.admin_secret):
        raise PageRefused(OPEN_ADMIN_LINK)
    return Manager(game=game, actor=admin.HOST, site_admin=None)
