"""Playing: submit an action, undo, auto-pass, and what every state change brings (its clock, its announcement).

Optimistic concurrency (ARCHITECTURE §2): an action names the version it was made against; the game row is
updated ``WHERE id = ? AND version = ?`` and the event log has a unique (game, version), so two submissions
racing for the same version apply exactly once. An idempotency key returns the first result again.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from pydantic_core import PydanticUndefined
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

import rules
from emails.messages import AutoPassed, HostAlert
from service.domain import bot_seats, chat_notices, story
from service.domain.clock import Clock, set_clock
from service.domain.errors import BadRequest, Conflict, IllegalMove
from service.domain.games import (
    begin_ending,
    event_insert,
    get_game,
    seats_by_number,
    seats_of,
    settings_of,
    update_if_unmoved,
)
from service.domain.links import LinkMaker
from service.domain.models import (
    ActionKind,
    GameAction,
    GameStatus,
    Player,
    Seat,
    SeatController,
    TurnStart,
    utcnow,
)
from service.domain.outbox import queue_mail
from service.domain.rows import EVENT_SELECTED, EventRow, GameRecord, SeatRow
from service.domain.story import LogEntry
from service.infra.mail_wakeup import want_announcement

logger = logging.getLogger(__name__)


@dataclass
class StepResult:
    #: The game after the step: the ORM's object or the plain row (``service.domain.rows``) it was made on.
    game: GameRecord
    version: int
    last: dict[str, Any]
    replayed: bool = False
    #: The state the step made (the game's snapshot, not read back from it); None for a replayed step.
    state: rules.GameState | None = None


def step_key(state: rules.GameState) -> str:
    """Identifies the step the game waits for: turn, seat on turn, and the defender in ``ask`` mode."""
    defender = state.defenders[0] if state.phase == rules.Phase.DEFEND else "-"
    return f"{state.turn}:{state.current}:{defender}"


def awaited_seat(key: str) -> int:
    """The seat a step key (:func:`step_key`) waits for: the defender redeploying, else the seat on turn.

    >>> awaited_seat("3:1:-"), awaited_seat("3:1:2")
    (1, 2)
    """
    _, current, defender = key.split(":")
    return int(current) if defender == "-" else int(defender)


def load_state(game: GameRecord) -> rules.GameState:
    if game.state is None:
        raise Conflict("This game has not started yet: waiting for every player to accept the invitation")
    return rules.read_state(game.state)


def submit_action(
    session: Session,
    game_id: int,
    seat: int,
    payload: dict[str, Any],
    expected_version: int,
    links: LinkMaker,
    idempotency_key: str | None = None,
    now: datetime | None = None,
    seats: dict[int, SeatRow] | None = None,
    by_bot: bool = False,
    game: GameRecord | None = None,
) -> StepResult:
    """Validate ``payload`` with the rules and apply it as ``seat``'s step.

    ``game`` (the ORM's object or a plain row) and ``seats`` (by seat number), when the caller has read them
    in this transaction, are not read again. ``by_bot``: the house bot plays the step
    (``service.domain.house_bot``); the log marks it so.
    """
    if idempotency_key:
        earlier = _by_idempotency_key(session, game_id, idempotency_key)
        if earlier is not None:
            return _replayed(session, earlier, seat)
    game = game or get_game(session, game_id)
    _check_running(game)
    if expected_version != game.version:
        raise Conflict(
            f"This game moved on (version {game.version}, your page had {expected_version}): reload and retry",
            version=game.version,
        )
    state = load_state(game)
    if seat not in rules.awaiting(state):
        raise Conflict("It is not your turn", version=game.version)
    if not by_bot and _bot_plays(session, game_id, seat, seats):
        # One player per seat at a time (ARCHITECTURE §10): the page, the API and replies by mail alike.
        raise Conflict("The house bot plays this seat: take it back from your link first", version=game.version)
    if not isinstance(payload, dict):
        raise BadRequest("The action must be a JSON object")
    payload = dict(payload)
    if payload.setdefault("player", seat) != seat:
        raise IllegalMove("You can only act for your own seat")
    try:
        new_state = rules.apply(state, payload)
    except rules.IllegalAction as refusal:
        raise IllegalMove(str(refusal)) from None
    event = new_event(
        game_id=game_id,
        seat=seat,
        kind=ActionKind.ACTION,
        action=rules.Action.from_json(payload).to_json(),
        version=game.version + 1,
        die=new_state.last.get("die"),
        undo_point=bool(new_state.last.get("undo_point")),
        idempotency_key=idempotency_key,
        by_bot=by_bot,
    )
    return commit_step(session, game, event, new_state, links, now or utcnow(), idempotency_key, seat, seats=seats)


def undo(
    session: Session,
    game_id: int,
    seat: int,
    expected_version: int,
    links: LinkMaker,
    steps: int | None = None,
    game: GameRecord | None = None,
) -> StepResult:
    """Take back the seat's latest ``steps`` steps (all of them by default) since the last undo point (a
    pick, a die roll, the turn's start: ARCHITECTURE §4, undo never goes past a step that revealed information
    or used chance). :func:`undo_steps` lists them. ``game``: as :func:`submit_action`'s."""
    game = game or get_game(session, game_id)
    _check_running(game)
    if expected_version != game.version:
        raise Conflict(f"This game moved on (version {game.version}): reload and retry", version=game.version)
    state = load_state(game)
    if seat not in rules.awaiting(state):
        raise Conflict("It is not your turn", version=game.version)
    undo_log = _undo_log(session, game, seat)
    undoable = undo_log.undoable
    if not undoable:
        raise IllegalMove("Nothing to undo: your last step revealed information or used the die")
    if steps is not None and not 1 <= steps <= len(undoable):
        many = f"only your last {len(undoable)} steps" if len(undoable) > 1 else "only your last step"
        raise IllegalMove(f"'steps': {many} can be undone, back to your last pick or die roll")
    taken_back = undoable[: steps or len(undoable)]
    for entry in taken_back:
        entry.undone = True
        session.add(entry)
    kept = [e for e in reversed(undo_log.log) if e not in taken_back]
    new_state = deque(undo_log.replayed(game, kept), maxlen=1)[0]
    new_state.last = {"kind": "undo", "player": seat, "undo_point": False, "undone": len(taken_back)}
    record = new_event(game_id=game_id, seat=seat, kind=ActionKind.UNDO, action=None, version=game.version + 1)
    return commit_step(session, game, record, new_state, links, utcnow(), None, seat)


@dataclass(frozen=True)
class UndoableStep:
    """One of the seat's steps an undo may take back: the ``version`` it made, its ``kind`` (action type),
    the step in a sentence (``rules.tell``, as the seat reads it) and ``back``: how many steps an undo
    that takes back this one and those after it takes (``undo(..., steps=back)``)."""

    version: int
    kind: str
    words: str
    back: int


def undo_steps(
    session: Session,
    game: GameRecord,
    seat: int,
    names: Sequence[str] | None = None,
    state: rules.GameState | None = None,
) -> list[UndoableStep]:
    """The seat's steps an undo may take back now, latest first, each told in words (the abilities' own
    telling, ``rules.tell``). Empty when it is not the seat's turn or nothing can be undone. ``names``: the
    seats' display names by seat number, when the caller has them (else they are read); ``state``: the game's
    state, when the caller has parsed it (else it is)."""
    if game.state is None or game.status != GameStatus.ACTIVE:
        return []
    if seat not in rules.awaiting(state or load_state(game)):
        return []
    undo_log = _undo_log(session, game, seat)
    undoable = undo_log.undoable
    if not undoable:
        return []
    if names is None:
        names = [s.display_name for s, _ in sorted(seats_of(session, game.id or 0), key=lambda sp: sp[0].seat)]
    # The states before and after each undoable step: the last len(undoable) + 1 of the replay.
    states = deque(undo_log.replayed(game, list(reversed(undo_log.log))), maxlen=len(undoable) + 1)
    out = []
    for back, entry in enumerate(undoable, start=1):
        before, after = states[-back - 1], states[-back]
        words = rules.tell(before, after, entry.action, names, viewer=seat)
        out.append(UndoableStep(entry.version, str((entry.action or {}).get("type", entry.kind)), words, back))
    return out


def live_log(session: Session, game_id: int, since: int = 0) -> list[GameAction]:
    """The log's steps that count (neither undone nor undo records), latest first; ``since``: from that
    version on only."""
    return list(session.exec(_LIVE_SINCE, params={"live_game": game_id, "live_from": since}).all())


@dataclass(frozen=True)
class _UndoLog:
    """What an undo by a seat reads: the live log (as :func:`live_log` gives it, latest first), the seat's
    steps an undo may take back (:func:`steps_to_undo`), and ``start``: when the log begins at the step
    that began the turn under way (its last entry), the state that step made, stored then (:class:`TurnStart`);
    None when it is the whole log."""

    log: list[GameAction]
    undoable: list[GameAction]
    start: rules.GameState | None

    def replayed(self, game: GameRecord, entries: list[GameAction]) -> Iterator[rules.GameState]:
        """:func:`replay_steps` of ``entries`` (the log's, oldest first), from the stored start when there is one."""
        return replay_steps(game, entries) if self.start is None else replay_from(self.start, entries[1:])


def _undo_log(session: Session, game: GameRecord, seat: int) -> _UndoLog:
    """What an undo by ``seat`` needs, from the stored start of the turn under way rather than the seed (an
    undo never goes past the turn's start: ARCHITECTURE §4); the whole log when no start is stored (the first turn,
    games older than the store) or when that start's own step is one the seat could undo."""
    start = session.exec(_LATEST_START, params={"start_game": game.id, "start_version": game.version}).first()
    if start is not None:
        version, state = start
        log = live_log(session, game.id or 0, since=version)
        undoable = steps_to_undo(log, seat)
        # Usable when the start's step is live and the seat's undo stops before it (else it reaches further).
        if log and log[-1].version == version and len(undoable) < len(log):
            return _UndoLog(log, undoable, rules.read_state(dict(state)))
    log = live_log(session, game.id or 0)
    return _UndoLog(log, steps_to_undo(log, seat), None)


def steps_to_undo(log: list[GameAction], seat: int) -> list[GameAction]:
    """What an undo by ``seat`` would take back now (``log`` as :func:`live_log` gives it), latest first:
    the seat's own steps since the last undo point. Empty when there is nothing to undo."""
    taken_back = []
    for entry in log:
        if entry.undo_point or entry.seat != seat or entry.kind != ActionKind.ACTION:
            break
        taken_back.append(entry)
    return taken_back


def auto_pass(
    session: Session,
    game_id: int,
    seat: int,
    links: LinkMaker,
    *,
    expected_version: int | None = None,
    reason: str = "deadline",
    now: datetime | None = None,
) -> StepResult:
    """The deadline's (or the admin's "pass now") completion of ``seat``'s step, through ``rules.auto_pass``.

    ``expected_version`` guards a sweep: if the game moved since the sweep read it, nothing happens.
    """
    game = get_game(session, game_id)
    _check_running(game)
    if expected_version is not None and expected_version != game.version:
        raise Conflict("The game moved on since the deadline was read", version=game.version)
    state = load_state(game)
    if seat not in rules.awaiting(state):
        raise Conflict(f"Seat {seat} has nothing to do now", version=game.version)
    new_state = rules.auto_pass(state, seat)
    record = new_event(
        game_id=game_id,
        seat=seat,
        kind=ActionKind.AUTO_PASS,
        action={"reason": reason},
        version=game.version + 1,
        undo_point=True,
    )
    now = now or utcnow()
    seats = seats_by_number(session, game_id)
    passed_seat = seats[seat]
    passed = AutoPassed(
        game_id=game_id,
        game_name=game.name,
        player_name=passed_seat.display_name,
        reason=reason,
        defending=state.phase == rules.Phase.DEFEND,
        version=game.version + 1,
    )
    if passed_seat.controller != SeatController.BOT:  # no mail to a bot seat's address for its turns
        queue_mail(session, passed_seat.player, passed, now=now)
    chat_notices.queue_notice(
        session,
        game,
        chat_notices.auto_pass_notice(
            game,
            name=passed_seat.display_name,
            reason=reason,
            defending=state.phase == rules.Phase.DEFEND,
            version=game.version + 1,
        ),
        now=now,
    )
    passes = new_state.players[seat].auto_passes
    if passes >= settings_of(game).auto_pass_alert_after and state.phase != rules.Phase.DEFEND:
        # The host need not hold a seat: create_game gave every host a player row for the admin link.
        host = session.exec(select(Player).where(Player.email == game.host_email)).first()
        if host is not None:
            alert = HostAlert(
                game_id=game_id,
                game_name=game.name,
                player_name=passed_seat.display_name,
                auto_passes=passes,
                admin_url=links.admin_url(game_id, game.admin_secret),
                seat=seat,
                # The host who missed their own turns is told so as "you".
                yourself=host.email.lower() == passed_seat.player.email.lower(),
            )
            queue_mail(session, host, alert, now=now)
    limit = settings_of(game).bot_after_missed_turns
    if limit and passes >= limit and state.phase != "defend" and passed_seat.controller == SeatController.PERSON:
        # The game's setting: after that many missed turns in a row the house bot plays the seat, until its
        # player takes it back from their link.
        bot_seats.give_seat_to_bot(session, game, seat, f"you missed {passes} turns in a row", links=links, now=now)
        seats[seat] = replace(passed_seat, controller=SeatController.BOT)  # as the seat's row now stands
    return commit_step(session, game, record, new_state, links, now, None, seat, seats=seats)


def replay(game: GameRecord, entries: Sequence[LogEntry]) -> rules.GameState:
    """Rebuild the state from the seed and the log (ARCHITECTURE §2: the snapshot is a cache)."""
    return deque(replay_steps(game, entries), maxlen=1)[0]


def replay_steps(game: GameRecord, entries: Sequence[LogEntry]) -> Iterator[rules.GameState]:
    """The state from the seed, then the state after each entry of ``entries`` that was not undone."""
    players = len(game.state["players"]) if game.state else 0
    yield from replay_from(rules.new_game(players, seed=game.seed, options=initial_options(game, entries)), entries)


def replay_from(state: rules.GameState, entries: Sequence[LogEntry]) -> Iterator[rules.GameState]:
    """``state``, then the state after each entry of ``entries`` (the log after ``state``) that was not undone."""
    yield state
    for entry in entries:
        if entry.undone:
            continue
        if entry.kind == ActionKind.ACTION:
            state = rules.apply(state, entry.action or {})
        elif entry.kind == ActionKind.AUTO_PASS:
            assert entry.seat is not None
            state = rules.auto_pass(state, entry.seat)
        elif entry.kind == ActionKind.OPTIONS:
            state = rules.with_options(state, (entry.action or {})["options"])
        yield state


def initial_options(game: GameRecord, entries: Sequence[LogEntry]) -> dict[str, Any]:
    """The house options the game started with: the settings now, unless the host changed them since (an
    ``options`` event remembers what it replaced)."""
    for entry in entries:
        if entry.kind == ActionKind.OPTIONS and "previous" in (entry.action or {}):
            return dict((entry.action or {})["previous"])
    return {"redeploy": settings_of(game).redeploy}


def after_change(
    session: Session,
    game: GameRecord,
    state: rules.GameState,
    links: LinkMaker,
    now: datetime,
    *,
    seats: dict[int, SeatRow] | None = None,
) -> None:
    """Store the new state; when the awaited step changed, start its clock and ask for its announcement.

    The step does only the step (ARCHITECTURE §2): telling the others (the turn mails with their story and
    board, the chat notice, the house bot's wake-up) is ``service.domain.announce``'s, in a job sent once this
    transaction commits (``mail_wakeup.want_announcement``); until it ran, the game's ``announced_key`` is
    None, and the deadline sweep finds the step unannounced should the job be lost.

    ``game`` is the ORM's object or a plain row (``service.domain.rows``), changed as it is; the caller writes
    it. ``seats`` (by seat number), when the caller has read them in this transaction, are not read again.
    """
    game.state = state.to_json()
    if state.over:
        begin_ending(session, game, now)  # the worker tallies it (service.domain.tally)
        return
    key = step_key(state)
    if key == game.step_key:
        return
    game.step_key = key
    game.announced_key = None
    settings = settings_of(game)
    defending = state.phase == rules.Phase.DEFEND
    length = settings.defender_turn_length_seconds if defending else settings.turn_length_seconds
    awaited_seats = rules.awaiting(state)
    if awaited_seats:
        if seats is None:
            seats = seats_by_number(session, game.id or 0)
        if all(passed_without_player(seats[n]) for n in awaited_seats):
            # A seat its host removed (admin.remove_player), or whose player resigned (admin.resign) and that
            # the house bot does not play, is passed at the next sweep, not a whole turn later.
            length = 0
    clock = Clock.of(game, settings).start_step(now, length, paused=game.status != GameStatus.ACTIVE)
    set_clock(game, clock)
    want_announcement(session, game.id or 0, links)


def passed_without_player(seat: Seat | SeatRow) -> bool:
    """Whether the seat's steps are passed at once by the deadline sweep: its host removed it, or its player
    resigned and the house bot does not play it (the host's ``resigned_seats`` setting)."""
    return seat.removed or (seat.resigned_at is not None and seat.controller != SeatController.BOT)


def told_turns(session: Session, game: GameRecord, readers: Collection[int] = ()) -> list[story.Turn] | None:
    """The game's log as turns (``service.domain.story``); None when the log does not replay (a turn's mail
    goes without its story rather than not at all; the error is logged).

    Every turn, replayed from the seed, unless ``readers`` are given: then only as many of the latest turns as
    "Since your last turn" tells each of them (``story.since_words`` tells the same of them as of all), replayed
    from the state stored at the start of a reader's turn (:class:`TurnStart`), so that it costs about a round
    of turns however long the game; from the seed when no stored start reaches back far enough (the first
    round; games older than the cache).
    """
    try:
        if readers:
            recent = _turns_since_stored_start(session, game, readers)
            if recent is not None:
                return recent
        log = story.kept(_log_from(session, game.id or 0, 0))
        return story.turns_of(log, replay_steps(game, log))
    except (rules.IllegalAction, ValueError, KeyError, StopIteration) as error:
        logger.warning("the log of game %s does not replay (%s): told without its story", game.id, error)
        return None


def since_words_on_turn(
    session: Session, game: GameRecord, state: rules.GameState, seat: int, names: Sequence[str]
) -> list[str]:
    """ "Since your last turn" for ``seat``'s turn page (:func:`told_turns`, ``story.since_words``).

    Once the seat on turn has taken a step of its turn, these words no longer change until the turn ends:
    they tell what came before that step (``story.since_last_turn``), and every entry before it stays as it
    is (an undo never goes past the turn's start, and takes back only the seat's own steps). So this process
    keeps them, by database, game, seat, the seat's names, the turn's stored start and the version of the
    seat's first step that counts, and the page's later views in the turn read them instead of telling the
    turn's story again; before the seat's first step, for a seat not on turn, or in a game without stored
    starts, they are told afresh.
    """
    key = _on_turn_key(session, game, state, seat, names)
    if key is not None:
        with _SINCE_LOCK:
            kept = _SINCE_KEPT.get(key)
            if kept is not None:
                _SINCE_KEPT.move_to_end(key)
                return list(kept)
    turns = told_turns(session, game, readers=[seat])
    if turns is None:
        return []
    words = story.since_words(turns, names, seat)
    if key is not None:
        with _SINCE_LOCK:
            _SINCE_KEPT[key] = tuple(words)
            while len(_SINCE_KEPT) > _SINCE_KEEP:
                _SINCE_KEPT.popitem(last=False)
    return words


def _on_turn_key(
    session: Session, game: GameRecord, state: rules.GameState, seat: int, names: Sequence[str]
) -> tuple[Any, ...] | None:
    """:func:`since_words_on_turn`'s key, when the seat is on turn and has taken a step of it; else None."""
    if state.over or state.phase == rules.Phase.DEFEND or state.current != seat:
        return None
    if session.autoflush:  # as the ORM's own queries do: what this transaction added is seen
        session.flush()
    found = session.connection().execute(_TURN_UNDER_WAY, {"game": game.id, "now": game.version}).first()
    if found is None or found[1] != seat or found[2] is None:
        return None
    start, _, first = found
    # The game as this database holds it (its id alone could be another database's, or a game's long gone).
    bind = session.get_bind()
    database = _DATABASES.get(bind)
    if database is None:
        database = _DATABASES[bind] = object()
    return (database, game.id, game.seed, game.created_at, seat, tuple(names), start, first)


def begins_turn(key: str | None, state: rules.GameState) -> bool:
    """Whether ``state``, made by a step while the game awaited the step ``key`` (:func:`step_key`), is the
    start of a seat's turn: another game turn or seat on turn (not a defender's redeployment, nor the end)."""
    if state.over or state.phase == rules.Phase.DEFEND:
        return False
    return key is None or key.rpartition(":")[0] != f"{state.turn}:{state.current}"


def forget_turn_starts(session: Session, game_id: int) -> None:
    """Drop the game's stored turn starts (:class:`TurnStart`): it has ended, no turn is told since."""
    session.exec(sa.delete(_STARTS).where(_STARTS.c.game_id == game_id))


# -- internals --------------------------------------------------------------------------------------------
def _check_running(game: GameRecord) -> None:
    if game.status == GameStatus.PAUSED:
        reason = f": {game.pause_reason}" if game.pause_reason else ""
        raise Conflict(f"The game is paused{reason}", version=game.version)
    if game.status != GameStatus.ACTIVE:
        raise Conflict(f"The game is not running (it is {game.status})", version=game.version)


def _bot_plays(session: Session, game_id: int, seat: int, seats: dict[int, SeatRow] | None) -> bool:
    if seats is not None and seat in seats:
        return seats[seat].controller == SeatController.BOT
    query = select(Seat.controller).where(Seat.game_id == game_id, Seat.seat == seat)
    return session.exec(query).first() == SeatController.BOT


def _by_idempotency_key(session: Session, game_id: int, key: str) -> GameAction | None:
    return session.exec(
        select(GameAction).where(GameAction.game_id == game_id, GameAction.idempotency_key == key)
    ).first()


def _replayed(session: Session, earlier: GameAction, seat: int) -> StepResult:
    if earlier.seat != seat:
        raise Conflict("This idempotency key was used by another seat")
    game = get_game(session, earlier.game_id)
    last = {"kind": (earlier.action or {}).get("type"), "player": seat}
    if earlier.die is not None:
        last["die"] = earlier.die
    return StepResult(game=game, version=earlier.version, last=last, replayed=True)


def new_event(**columns: Any) -> dict[str, Any]:
    """A log entry's row as :func:`commit_step` writes it: ``columns`` (:class:`GameAction`'s), the others at
    the model's own defaults (``created_at`` now). A plain mapping: the event is one INSERT and is not read
    back, so no ORM object is made for it (that cost a step about as much as its INSERT's execution)."""
    unknown = columns.keys() - _EVENT_COLUMNS_SET
    if unknown:
        raise TypeError(f"not a column of the event log: {', '.join(sorted(unknown))}")
    row = {name: default() for name, default in _EVENT_DEFAULTS.items()}
    row.update(columns)
    missing = _EVENT_COLUMNS_SET - row.keys()
    if missing:
        raise TypeError(f"the event needs {', '.join(sorted(missing))}")
    return row


def commit_step(
    session: Session,
    game: GameRecord,
    event: Mapping[str, Any],
    new_state: rules.GameState,
    links: LinkMaker,
    now: datetime,
    idempotency_key: str | None,
    seat: int,
    *,
    seats: dict[int, SeatRow] | None = None,
) -> StepResult:
    """Append the event (:func:`new_event`) and move the game's version on, exactly once even under races.

    Two guards: the event log's unique (game, version) refuses a second event made against the same
    version, and the game's one UPDATE of this step (its version, snapshot, clock) is made ``WHERE version
    = <the version the step was made against>``, so anything else that moved the game first wins.
    """
    expected = game.version
    try:
        session.flush()  # what the caller changed before (an undo's steps marked undone)
        # The common step, on PostgreSQL: the event goes in with the game's UPDATE, one statement.
        with_update = _written_with_update(session, game, new_state)
        # Else one INSERT, built once: the event is not read back, so it needs none of the ORM's unit of work. It
        # locks the game's row first (``games.event_insert``: one order of locks with the sweep's), and inserts
        # nothing when the game moved meanwhile.
        if not with_update:
            insert = event_insert(session.get_bind().dialect.name, frozenset(event))
            if session.connection().execute(insert, event).first() is None:
                raise _Lost()
        if begins_turn(game.step_key, new_state):  # not the common step: that neither reads nor writes them
            _keep_turn_start(session, game.id or 0, expected + 1, new_state)
        game.version = expected + 1
        with session.no_autoflush:  # the game's changes go out in the guarded UPDATE, not on their own
            after_change(session, game, new_state, links, now, seats=seats)
            if not update_if_unmoved(session, game, expected, event=event if with_update else None):
                raise _Lost()
        session.commit()
    except (IntegrityError, _Lost):
        session.rollback()
        if idempotency_key:
            earlier = _by_idempotency_key(session, game.id or 0, idempotency_key)
            if earlier is not None:
                return _replayed(session, earlier, seat)
        fresh = get_game(session, game.id or 0)
        raise Conflict("Another step was applied first: reload and retry", version=fresh.version) from None
    return StepResult(game=game, version=game.version, last=dict(new_state.last), state=new_state)


def _written_with_update(session: Session, game: GameRecord, new_state: rules.GameState) -> bool:
    """Whether a step's event is written in the game's guarded UPDATE (``games.update_if_unmoved``'s ``event``):
    on PostgreSQL, for the common step, which leaves the same step awaited (the seat on turn goes on). Then
    nothing is written between the event and the UPDATE (:func:`after_change` stores the state and stops: no
    clock, no announcement asked for, no stored turn start). A step that passes the turn, or ends the game,
    inserts its event first, locking the game's row before it writes the rest (one order of locks with the
    sweep's). SQLite keeps the INSERT of its own."""
    if new_state.over or step_key(new_state) != game.step_key:
        return False
    return session.get_bind().dialect.name == "postgresql"


def _keep_turn_start(session: Session, game_id: int, version: int, state: rules.GameState) -> None:
    """Store ``state`` as the start of the turn of the seat on turn; of its earlier ones keep the latest only
    (the turn before, which its "Since your last turn" starts from)."""
    mine = {"game_id": game_id, "seat": state.current}
    session.execute(_PRUNE_STARTS, mine)
    session.execute(_INSERT_START, mine | {"version": version, "state": state.to_json()})


def _turns_since_stored_start(session: Session, game: GameRecord, readers: Collection[int]) -> list[story.Turn] | None:
    """The game's latest turns, from the latest stored start of a reader's turn (:class:`TurnStart`) that
    holds every reader's previous turn of its own; None when no stored start does."""
    found = session.connection().execute(
        _READERS_STARTS, {"game": game.id, "readers": list(readers), "now": game.version}
    )
    starts = found.all()[: 2 * len(readers)]
    if not starts:
        return None
    # The log once, from the earliest of them.
    log = _log_from(session, game.id or 0, starts[-1][0])
    for version, state in starts:
        turns = turns_since_start(version, state, [e for e in log if e.version >= version], readers)
        if turns is not None:
            return turns
    return None


def _log_from(session: Session, game_id: int, start: int) -> list[EventRow]:
    """The game's log from version ``start`` on, in order, as plain records: what its story reads (a turn's
    mail reads it at each turn that passes, and changes none of it)."""
    if session.autoflush:  # as the ORM's own queries do: what this transaction added is seen
        session.flush()
    return [EventRow(*row) for row in session.connection().execute(_LOG_FROM, {"game": game_id, "start": start})]


def turns_since_start(
    version: int, state: Mapping[str, Any], log: Sequence[LogEntry], readers: Collection[int]
) -> list[story.Turn] | None:
    """The turns of ``log`` (the game's log from ``version`` on, in order) after the step of ``version``,
    replayed from ``state``, the state that step made at the start of a turn (:class:`TurnStart`); None
    unless they hold every reader's previous turn of its own (``story.reaches_last_turn``)."""
    if not log or log[0].version != version or not story.kept(log[:1]):
        return None  # the step that began the turn is not in the log as it counts now
    entries = story.kept(log[1:])
    if not entries or not all(_may_hold_last_turn(entries, reader) for reader in readers):
        return None
    if _same_seat_steps(log[0], entries[0]):
        return None  # one turn across the stored start, not where a turn of the story begins
    turns = story.turns_of(entries, replay_from(rules.read_state(dict(state)), entries))
    return turns if all(story.reaches_last_turn(turns, reader) for reader in readers) else None


def _may_hold_last_turn(entries: Sequence[LogEntry], seat: int) -> bool:
    """Whether ``entries`` (kept, in order) may hold a turn of ``seat``'s before the one it is playing: a step
    of its own before the steps it ends them with. (Without one, no replay of them can.)"""
    end = len(entries)
    while end and entries[end - 1].seat == seat:
        end -= 1
    return any(entry.seat == seat for entry in entries[:end])


def _same_seat_steps(first: LogEntry, then: LogEntry) -> bool:
    """Whether two entries in a row are steps of the same seat (the story might tell them as one turn)."""
    return first.kind in story.SEAT_STEPS and then.kind in story.SEAT_STEPS and first.seat == then.seat


_ACTIONS: sa.Table = GameAction.__table__  # type: ignore[attr-defined]
_STARTS: sa.Table = TurnStart.__table__  # type: ignore[attr-defined]
#: The stored turn starts of some seats before the game's version, latest first (each seat keeps two), and the
#: log's story columns from a version on (:func:`_log_from`): Core statements built once, as the step's INSERT is.
_READERS_STARTS = (
    sa.select(_STARTS.c.version, _STARTS.c.state)
    .where(
        _STARTS.c.game_id == sa.bindparam("game"),
        _STARTS.c.seat.in_(sa.bindparam("readers", expanding=True)),
        _STARTS.c.version < sa.bindparam("now"),
    )
    .order_by(_STARTS.c.version.desc())
    .limit(2 * 5)  # two a seat, five seats at most
)
_LOG_FROM = (
    sa.select(*EVENT_SELECTED)
    .where(_ACTIONS.c.game_id == sa.bindparam("game"), _ACTIONS.c.version >= sa.bindparam("start"))
    .order_by(_ACTIONS.c.version)
)
#: The game's latest stored turn start (:func:`_undo_log`), and the live log from a version on (:func:`live_log`).
_LATEST_START = (
    select(TurnStart.version, TurnStart.state)
    .where(TurnStart.game_id == sa.bindparam("start_game"), TurnStart.version <= sa.bindparam("start_version"))
    .order_by(col(TurnStart.version).desc())
    .limit(1)
)
_LIVE_SINCE = (
    select(GameAction)
    .where(
        GameAction.game_id == sa.bindparam("live_game"),
        GameAction.undone == sa.false(),
        GameAction.kind != ActionKind.UNDO,
        GameAction.version >= sa.bindparam("live_from"),
    )
    .order_by(col(GameAction.version).desc())
)
#: The latest stored turn start (its version and seat) with its seat's first step that counts since, in one
#: statement: :func:`since_words_on_turn`'s key.
_FIRST_OWN_STEP = (
    sa.select(sa.func.min(_ACTIONS.c.version))
    .where(
        _ACTIONS.c.game_id == _STARTS.c.game_id,
        _ACTIONS.c.version > _STARTS.c.version,
        _ACTIONS.c.seat == _STARTS.c.seat,
        _ACTIONS.c.kind.in_(story.SEAT_STEPS),
        _ACTIONS.c.undone == sa.false(),
    )
    .scalar_subquery()
)
_TURN_UNDER_WAY = (
    sa.select(_STARTS.c.version, _STARTS.c.seat, _FIRST_OWN_STEP)
    .where(_STARTS.c.game_id == sa.bindparam("game"), _STARTS.c.version <= sa.bindparam("now"))
    .order_by(_STARTS.c.version.desc())
    .limit(1)
)
#: :func:`since_words_on_turn`'s words, by key, the latest used last; at most _SINCE_KEEP of them (a few
#: hundred bytes each).
_SINCE_KEPT: OrderedDict[tuple[Any, ...], tuple[str, ...]] = OrderedDict()
_SINCE_KEEP = 4096
_SINCE_LOCK = threading.Lock()
_DATABASES: weakref.WeakKeyDictionary[Any, object] = weakref.WeakKeyDictionary()
#: :func:`_keep_turn_start`'s two statements, built once: drop a seat's stored starts but its latest, then
#: store the new one.
_A_SEATS_STARTS = sa.and_(_STARTS.c.game_id == sa.bindparam("game_id"), _STARTS.c.seat == sa.bindparam("seat"))
_PRUNE_STARTS = sa.delete(_STARTS).where(
    _A_SEATS_STARTS,
    _STARTS.c.version < sa.select(sa.func.max(_STARTS.c.version)).where(_A_SEATS_STARTS).scalar_subquery(),
)
_INSERT_START = sa.insert(_STARTS)
#: The event's columns an INSERT writes (the id is the database's), and that INSERT.
_EVENT_COLUMNS = [column.name for column in _ACTIONS.columns if column.name != "id"]
_EVENT_COLUMNS_SET = frozenset(_EVENT_COLUMNS)


def _default_of(name: str) -> Callable[[], Any] | None:
    """How :class:`GameAction` fills its field ``name`` when it is not given; None when it must be given."""
    field = GameAction.model_fields[name]
    if field.default_factory is not None:
        return field.default_factory  # type: ignore[return-value]
    if field.default is PydanticUndefined:
        return None
    value = field.default
    return lambda: value


#: :func:`new_event`'s defaults: the model's own, so that a row written here reads as the ORM would write it.
_EVENT_DEFAULTS = {name: default for name in _EVENT_COLUMNS if (default := _default_of(name)) is not None}


class _Lost(Exception):
    """The conditional version update matched no row: someone else moved the game first."""
