"""The game page (read-only: the map, whose turn, the deadline) and the history with its replay.

Only public information: ``rules.player_view`` for the viewer (their own coins, nobody else's) on the game
page, and ``rules.player_view(state, None)`` of each past state in the replay. The replay rebuilds past
states on the server from the seed and the log (``service.domain.play.replay_steps``); the seed, the
random generator and the stacks never reach the page before the game is over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, flash, redirect, render_template, request, url_for
from sqlmodel import col, select
from werkzeug.wrappers import Response

import rules
from emails.render import webcal
from emails.times import zone as zone_of
from service.domain import admin, games, lobby, play, records, rematch, story, table_talk, views
from service.domain.clock import Clock
from service.domain.errors import BadRequest, DomainError
from service.domain.links import current_links
from service.domain.models import ActionKind, Game, GameAction, GameResult, GameStatus, MessageSource, Player
from service.domain.text import checked, known_zone
from service.infra.db import get_session
from service.web import hosting
from service.web.maps import MapOptions, board_svg
from service.web.pages.access import Viewer, viewer_for
from service.web.pages.forms import int_or_none
from service.web.pages.game_summary import page_context
from service.web.pages.narration import describe_step, told_log
from service.web.pages.table_talk import ANCHOR as TALK_ANCHOR
from service.web.pages.table_talk import board_context, is_host

bp = Blueprint("game", __name__)


@bp.post("/games/<int:game_id>/me/time-zone")
def choose_time_zone(game_id: int) -> Response:
    """The viewer's own time zone, for every game of theirs and every mail (their choice alone)."""
    viewer = viewer_for(game_id)
    back = request.form.get("back", "")
    if back not in (url_for("game.page", game_id=game_id), url_for("turn.page", game_id=game_id)):
        back = url_for("game.page", game_id=game_id)
    try:
        zone = checked("Your time zone:", known_zone, request.form.get("time_zone", "").strip())
    except BadRequest as error:
        flash(error.message, "refusal")
        return redirect(back, code=303)
    lobby.choose_time_zone(get_session(), viewer.player.id or 0, zone)
    flash(f"Times are shown in {zone}, in every game of yours.", "done")
    return redirect(back, code=303)


#: Steps listed on the game page; the history page lists them all.
RECENT = 12


@dataclass(frozen=True)
class Step:
    number: int  # the game version the step produced
    words: str
    at: str
    undone: bool
    turn: int
    player_on_turn: int
    #: Its place among the steps kept (undone steps and undo records are not counted): "After step 12".
    ordinal: int = 0


@bp.get("/games/<int:game_id>")
def page(game_id: int) -> Any:
    return game_page(viewer_for(game_id))


def game_page(viewer: Viewer, talk: dict[str, Any] | None = None) -> str:
    """The game page for ``viewer``; ``talk``: the table-talk board as it must show (a refused draft)."""
    game_id = viewer.game.id or 0
    db = get_session()
    view = views.game_view(db, viewer.game, viewer.number)
    public = view.state or {}
    names = [s.name for s in view.seats]
    zone = zone_of(viewer.player.time_zone)
    recent = []
    if viewer.game.state is not None:
        # The rules tell each step from the states around it: the game is replayed from its seed.
        log = list(db.exec(select(GameAction).where(GameAction.game_id == game_id).order_by(col(GameAction.version))))
        told = told_log(viewer.game, log, names, viewer.number, reveal=view.result is not None)
        # Steps taken back never appear, nor the undo records (issue 18).
        steps = [(entry, words) for entry, _, _, words in told if entry.kind != ActionKind.UNDO and not entry.undone]
        recent = [
            {"words": words, "at": _when(entry.created_at, zone), "undone": entry.undone}
            for entry, words in reversed(steps[-RECENT:])
        ]
    # Between turns the page leads with the map, the story since the viewer's last turn and the deadline
    # (issue 35): the same words as the turn page's "Since your last turn".
    since: list[str] = []
    your_turn = viewer.number in view.awaiting
    if viewer.game.state is not None and viewer.game.status in (GameStatus.ACTIVE, GameStatus.PAUSED) and not your_turn:
        state = rules.read_state(viewer.game.state)
        since = play.since_words_on_turn(db, viewer.game, state, viewer.number, names)
    return render_template(
        "game/page.html",
        **page_context(viewer, view, Clock.read(viewer.game), public, names, map_id="gamemap"),
        recent=recent,
        since=since,
        your_turn=your_turn,
        house_bot=viewer.bot_plays,
        standings=view.result,
        ratings=result_lines(db, game_id) if view.result is not None else {},
        host=viewer.player.email == viewer.game.host_email,
        rematch_started=rematch.started(db, game_id) is not None if view.result is not None else False,
        resigned=viewer.seat.resigned_at is not None,
        calendar=calendar_links(viewer.player, game_id),
        talk=talk or board_context(viewer),
    )


def result_lines(db: Any, game_id: int) -> dict[int, dict[str, Any]]:
    """Per seat of a finished game: its rating after the game and the change (shown as openskill's mu − 3σ),
    and its address's record now without the rating, which is shown once (``service.domain.records``).
    Public: finished games only.

    A first rated game has no change: before it the address had no rating (``Record.rating`` is None before a
    first finished game), and the change from openskill's starting point (mu 25, sigma 25/3, shown as 0)
    would read as a loss for any place but the first, since sigma is still large (issue 35).
    """
    rows = list(db.exec(select(GameResult).where(GameResult.game_id == game_id).order_by(col(GameResult.seat))).all())
    held = records.records_of(db, [row.player_id for row in rows])
    earlier = rated_before(db, rows)
    lines = {}
    for row in rows:
        after = records.Record(games=1, mu=row.rating_mu, sigma=row.rating_sigma).rating or 0
        before = records.Record(games=1, mu=row.rating_mu_before, sigma=row.rating_sigma_before).rating or 0
        lines[row.seat] = {
            "rating": after,
            "change": f"{after - before:+d}" if row.player_id in earlier else None,
            "record": held[row.player_id].deeds,
            "resigned": row.resigned,
        }
    return lines


def rated_before(db: Any, rows: list[GameResult]) -> set[int]:
    """The addresses among ``rows`` (one finished game's) that had a finished game tallied before this one."""
    if not rows:
        return set()
    ids = [row.player_id for row in rows]
    query = select(GameResult.player_id).where(
        col(GameResult.player_id).in_(ids),
        GameResult.game_id != rows[0].game_id,
        col(GameResult.created_at) < rows[0].created_at,
    )
    return set(db.exec(query.distinct()).all())


# -- table talk (ARCHITECTURE §9) --------------------------------------------------------------------------------
def _talk_back(game_id: int) -> str:
    back = request.form.get("back", "")
    allowed = (url_for("game.page", game_id=game_id), url_for("turn.page", game_id=game_id))
    return back if back in allowed else allowed[0]


@bp.post("/games/<int:game_id>/talk")
def post_message(game_id: int) -> Any:
    """A message from the seat's page (``service.domain.table_talk.post_message``). A refused one is not
    lost: the game page comes back with the refusal naming the field and the text as typed, with a 4xx
    status (400; 429 with ``Retry-After`` past the rate limit)."""
    viewer = viewer_for(game_id)
    text = request.form.get("text", "")
    try:
        table_talk.post_message(get_session(), viewer.game, viewer.number, text, MessageSource.PAGE)
    except DomainError as error:
        get_session().rollback()
        page = game_page(viewer, talk=board_context(viewer, draft=text, error=error.message, back=_talk_back(game_id)))
        headers = {"Retry-After": str(error.extra["retry_after"])} if "retry_after" in error.extra else {}
        return page, error.status, headers
    return redirect(f"{_talk_back(game_id)}#{TALK_ANCHOR}", code=303)


@bp.post("/games/<int:game_id>/talk/<int:message_id>/hide")
def hide_message(game_id: int, message_id: int) -> Response:
    """The host hides a message from their seat's pages (shown to everyone as "hidden by the host")."""
    viewer = viewer_for(game_id)
    if not is_host(viewer):
        flash("Only the game's host can hide a message.", "refusal")
        return redirect(f"{_talk_back(game_id)}#{TALK_ANCHOR}", code=303)
    try:
        table_talk.hide_message(get_session(), viewer.game, message_id, "host")
    except DomainError as error:
        flash(error.message, "refusal")
    else:
        flash("The message is hidden for everyone.", "done")
    return redirect(f"{_talk_back(game_id)}#{TALK_ANCHOR}", code=303)


def calendar_links(player: Player, game_id: int) -> dict[str, str]:
    """The viewer's calendar feed (every deadline of their games) and the game's own (public: whose turn,
    until when), each in its ``webcal://`` form and its ``https://`` one."""
    links = current_links()
    mine = links.address_calendar_url(
        player.id or 0, serial=player.links_serial, calendar_serial=player.calendar_serial
    )
    game = links.game_calendar_url(game_id)
    return {"mine": mine, "mine_webcal": webcal(mine), "game": game, "game_webcal": webcal(game)}


@bp.get("/games/<int:game_id>/history")
def history(game_id: int) -> Any:
    """The game told turn by turn (``service.domain.story``: the same sentences as "Since your last turn"),
    grouped by game turn; ``?player=<seat>`` keeps one player's turns; each turn's steps link to the board
    after them (``?step=<number>``). Steps that were undone never appear."""
    viewer = viewer_for(game_id)
    return render_history(
        viewer.game,
        viewer.number,
        zone_of(viewer.player.time_zone),
        lambda **args: url_for("game.history", game_id=game_id, **args),
    )


def render_history(game: Game, seat: int | None, zone: ZoneInfo, history_url: Callable[..., str], **page: Any) -> Any:
    """The history page of ``game`` as ``seat`` sees it (``None``: a spectator, ``service.web.pages.watch``);
    ``history_url(step=…, player=…)`` is the address of the page itself, ``page`` more for its template."""
    db = get_session()
    game_id = game.id or 0
    view = views.game_view(db, game, seat)
    names = [s.name for s in view.seats]
    asked = int_or_none(request.args.get("step"))
    chosen = request.args.get("player", "")
    player = int_or_none(chosen)
    if chosen and (player is None or not 0 <= player < len(names)):
        message = f"player: there is no player {chosen!r} in this game; the seats are 0 to {len(names) - 1}."
        return render_template("refused.html", heading="No such player", message=message), 400
    reveal = view.result is not None

    turns = play.told_turns(db, game) if game.state is not None else None
    steps: list[Step] = []
    shown_state: rules.GameState | None = None
    shown: Step | None = None
    groups: list[dict[str, Any]] = []
    if game.state is not None:
        # The start, unless a step is asked for: its options are those the first ``options`` event replaced.
        options = (GameAction.game_id == game_id, GameAction.kind == ActionKind.OPTIONS)
        changes = story.kept(db.exec(select(GameAction).where(*options).order_by(col(GameAction.version))).all())
        shown_state = next(play.replay_steps(game, changes))
    for turn in turns or []:
        told_steps = []
        for entry, before, after in turn.steps:
            step = Step(
                number=entry.version,
                words=describe_step(entry, before, after, names, seat, reveal),
                at=_when(entry.created_at, zone),
                undone=False,
                turn=before.turn,
                player_on_turn=before.current,
                ordinal=len(steps) + 1,
            )
            steps.append(step)
            told_steps.append(step)
            if asked is None or entry.version <= asked:
                shown_state, shown = after, step
        if player is not None and turn.seat != player:
            continue
        if not groups or groups[-1]["turn"] != turn.turn:
            groups.append({"turn": turn.turn, "turns": []})
        groups[-1]["turns"].append(
            {
                "seat": turn.seat,
                "words": story.tell(turn, names, seat, reveal),
                "steps": told_steps,
                "at": told_steps[-1].at,
            }
        )
    replayable = [s.number for s in steps]
    current = shown.number if shown else 0
    previous = max((n for n in replayable if n < current), default=0 if shown else None)
    following = min((n for n in replayable if n > current), default=None)

    public = rules.player_view(shown_state, None, revealed=view.status == "finished") if shown_state else {}
    map_svg = (
        board_svg(public, MapOptions(id_prefix="replay", seat_names=names, label="The map after the step shown"))
        if public
        else ""
    )
    return render_template(
        "game/history.html",
        game=view,
        groups=groups,
        names=names,
        player=player,
        shown=shown,
        replay_state=shown_state or {"turn": 0, "turns": 0},
        previous=previous,
        next=following,
        map_svg=map_svg,
        history_url=history_url,
        **page,
    )


def _when(at: datetime, zone: ZoneInfo) -> str:
    return f"{at.astimezone(zone):%a %-d %b %H:%M}"


# -- resigning and the rematch (ARCHITECTURE §9) -----------------------------------------------------------------
@bp.get("/games/<int:game_id>/resign")
def resign_page(game_id: int) -> Any:
    """Asks the seat's player to confirm: resigning cannot be taken back."""
    viewer = viewer_for(game_id)
    settings = games.settings_of(viewer.game)
    return render_template(
        "game/resign.html",
        game=viewer.game,
        seat=viewer.seat,
        by_bot=settings.resigned_seats == "bot",
        can_resign=viewer.game.status in (GameStatus.ACTIVE, GameStatus.PAUSED)
        and viewer.seat.resigned_at is None
        and not viewer.seat.removed,
    )


@bp.post("/games/<int:game_id>/resign")
def resign(game_id: int) -> Response:
    """The seat's player resigns (``service.domain.admin.resign``): announced to everyone, in the history."""
    viewer = viewer_for(game_id)
    try:
        admin.resign(get_session(), game_id, viewer.number, current_links())
    except DomainError as error:
        get_session().rollback()
        flash(error.message, "refusal")
        return redirect(url_for("game.page", game_id=game_id), code=303)
    flash("You resigned from the game. The other players were told; you may still watch it from here.", "done")
    return redirect(url_for("game.page", game_id=game_id), code=303)


@bp.post("/games/<int:game_id>/rematch")
def start_rematch(game_id: int) -> Response:
    """The host's one click on a finished game: a new game with the same players, invitations sent
    (``service.domain.rematch``, through the lobby's own path and limits)."""
    viewer = viewer_for(game_id)
    session = get_session()
    try:
        claim_id, request_body = rematch.claim(session, game_id, viewer.number)
    except DomainError as error:
        flash(error.message, "refusal")
        return redirect(url_for("game.page", game_id=game_id), code=303)
    try:
        new_game = hosting.new_game(request_body)
        hosting.confirm_as_host(new_game)
    except DomainError as error:
        rematch.release(session, claim_id)
        flash(f"The rematch could not be made: {error.message}", "refusal")
        return redirect(url_for("game.page", game_id=game_id), code=303)
    rematch.done(session, claim_id, new_game.id or 0)
    flash(
        f"The rematch, {new_game.name}, is on: every player was invited by mail, and your admin link for it is in "
        "your mail.",
        "done",
    )
    return redirect(url_for("game.page", game_id=game_id), code=303)
