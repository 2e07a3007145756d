"""Spectators' pages (ARCHITECTURE §9): a game's watch page, by its watch link or, for a public game, without one;
and the list of public games.

A watcher is nobody in particular: the page is built from ``views.game_view(…, None)`` (``rules.player_view``
for no seat: every coin count hidden until the end) and the steps told to nobody (a turn's score stays
hidden until the end). It never holds a seat's link, an address or the admin link: the page is read-only,
and its only form is "mail me my links", which mails links to the address typed, never shows them.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from flask import Blueprint, render_template, request, url_for
from sqlmodel import col, select

from emails import times
from service.domain import views, watching
from service.domain.clock import Clock
from service.domain.links import current_links
from service.domain.models import ActionKind, Game, GameAction, GameStatus, utcnow
from service.infra.db import get_session
from service.web.pages.access import refused_as
from service.web.pages.forms import int_or_none
from service.web.pages.game import render_history
from service.web.pages.game_summary import deadline, page_context
from service.web.pages.narration import told_log
from service.web.pages.table_talk import watch_context

bp = Blueprint("watch", __name__)

#: The heading of the page a game that cannot be watched (so) refuses with; its error says why.
NOT_WATCHABLE = "This game cannot be watched here"
#: Steps listed on the watch page, newest first.
RECENT = 20


@bp.get("/games/<int:game_id>/watch/<token>")
def by_link(game_id: int, token: str) -> Any:
    return _watch_page(game_id, token, history="watch.history_by_link")


@bp.get("/games/<int:game_id>/watch")
def public(game_id: int) -> Any:
    return _watch_page(game_id, None, history="watch.public_history")


@bp.get("/games/<int:game_id>/watch/<token>/history")
def history_by_link(game_id: int, token: str) -> Any:
    """The game's history (``service.web.pages.game.render_history``) as nobody in particular sees it."""
    return _history(game_id, token, "watch.history_by_link", page="watch.by_link")


@bp.get("/games/<int:game_id>/watch/history")
def public_history(game_id: int) -> Any:
    return _history(game_id, None, "watch.public_history", page="watch.public")


def _watched(game_id: int, token: str | None) -> Game:
    """The game a watch link (``token``) opens, or without one the game if it is public; ``DomainError`` when
    it cannot be watched that way."""
    if token is None:
        return watching.public_game(get_session(), game_id)
    return watching.game_from_watch_token(get_session(), current_links(), game_id, token)


def _history(game_id: int, token: str | None, endpoint: str, *, page: str) -> Any:
    """The history page of the game watched by ``token`` (or as a public game), at ``endpoint``; ``page``: the
    endpoint of the watch page it links back to. Each keeps the way the watcher came (the token, if any)."""
    with refused_as(NOT_WATCHABLE):
        game = _watched(game_id, token)
    return render_history(
        game,
        None,
        times.zone("UTC"),
        lambda **args: url_for(endpoint, game_id=game_id, token=token, **args),
        watch_url=url_for(page, game_id=game_id, token=token),
    )


def _watch_page(game_id: int, token: str | None, *, history: str) -> Any:
    """The watch page of the game watched by ``token`` (or as a public game); ``history``: the endpoint of its
    history page, reached the same way."""
    with refused_as(NOT_WATCHABLE):
        game = _watched(game_id, token)
    db = get_session()
    view = views.game_view(db, game, None)
    public_state = view.state or {}
    names = [s.name for s in view.seats]
    over = view.result is not None
    recent = []
    if game.state is not None:
        log = list(db.exec(select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))))
        steps = [(entry, words) for entry, _, _, words in told_log(game, log, names, None, reveal=over)]
        recent = [
            {"words": words, "at": f"{entry.created_at.astimezone(UTC):%a %-d %b %H:%M} UTC", "undone": entry.undone}
            for entry, words in reversed(steps[-RECENT:])
            if entry.kind != ActionKind.UNDO
        ]
    return render_template(
        "watch/page.html",
        **page_context(None, view, Clock.read(game), public_state, names, map_id="watchmap"),
        recent=recent,
        standings=view.result,
        here=request.path,
        history_url=url_for(history, game_id=game_id, token=token),
        is_public=game.public,
        talk=watch_context(game),
    )


@bp.get("/games/public")
def public_list() -> Any:
    page = max(1, int_or_none(request.args.get("page")) or 1)
    games, more = watching.public_games(get_session(), page)
    utc, now = times.zone("UTC"), utcnow()
    return render_template(
        "watch/public.html",
        games=games,
        page=page,
        more=more,
        deadline_of=lambda g: deadline(g.clock, now, utc) if g.status == GameStatus.ACTIVE else None,
    )
