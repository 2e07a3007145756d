""" "Since your last turn" told from the stored start of a turn (``service.domain.play.told_turns`` with
``readers``, ``TurnStart``) says exactly what the replay of the whole log from the seed says (issue 21).

Random games are dealt through the domain (the rules' random bot for every seat; now and then a missed
deadline, an undo, a step played by the house bot, and the host's acts: a deadline moved, a pause, the
defenders' redeployment switched between ``auto`` and ``ask`` (an ``options`` event), a seat given to someone
else, a player removed). After every step, each seat's "Since your last turn" from the stored starts is
compared with the one from the whole replay, and each turn mail the step queued with the whole replay's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import Session, col, func, select

import rules
from emails.messages import from_json
from rules.bots import random_player
from service.domain import admin, play, story, tally
from service.domain.links import LinkMaker
from service.domain.models import ActionKind, Game, GameAction, GameStatus, OutboxMail, Seat, SeatController, TurnStart
from service.domain.schemas import GameSettings
from tests.factories import GameFactory, PlayerFactory, SeatFactory

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")


def new_game(session: Session, players: int, seed: str, redeploy: str = "auto") -> Game:
    settings = GameSettings(redeploy=redeploy).model_dump()  # type: ignore[arg-type]
    game = GameFactory(started=True, players=players, seed=seed, settings=settings)
    game.state = rules.new_game(players, seed=seed, options={"redeploy": redeploy}).to_json()
    for seat, name in enumerate(NAMES[:players]):
        SeatFactory(game_id=game.id, player_id=PlayerFactory().id, seat=seat, display_name=name)
    session.add(game)
    session.flush()
    return game


def whole_replay(session: Session, game: Game, seat: int) -> list[str]:
    """The reference: every turn replayed from the seed, then told for ``seat``."""
    turns = play.told_turns(session, game)
    assert turns is not None
    return story.since_words(turns, NAMES, seat)


def from_stored_start(session: Session, game: Game, seat: int, names: Sequence[str] = NAMES) -> list[str]:
    turns = play.told_turns(session, game, readers=[seat])
    assert turns is not None
    return story.since_words(turns, names, seat)


def seat_names(session: Session, game: Game) -> list[str]:
    return list(session.exec(select(Seat.display_name).where(Seat.game_id == game.id).order_by(col(Seat.seat))).all())


class Counter:
    """How often the stored starts told the story, and how often the seed had to."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.stored = self.seed = 0
        real = play._turns_since_stored_start

        def counted(*args: Any) -> list[story.Turn] | None:
            found = real(*args)
            if found is None:
                self.seed += 1
            else:
                self.stored += 1
            return found

        monkeypatch.setattr(play, "_turns_since_stored_start", counted)


#: The host's acts at given steps of each game, besides those the dice choose.
ACTS = {12: "options", 25: "extend", 38: "replace", 51: "pause", 64: "options", 80: "extend", 97: "options"}


def one_step(session: Session, game: Game, links: LinkMaker, rnd: random.Random, act: str = "") -> str:
    """Play one random step or act on ``game`` (``act``: that act of the host's); what it was."""
    state = play.load_state(game)
    awaited = min(rules.awaiting(state))
    roll = {"options": 0.11, "extend": 0.12, "pause": 0.127, "replace": 0.131}.get(act) or rnd.random()
    if roll < 0.04:
        play.auto_pass(session, game.id or 0, awaited, links)
        return "auto_pass"
    undoable = play.steps_to_undo(play.live_log(session, game.id or 0), awaited)
    if roll < 0.10 and undoable:
        play.undo(session, game.id or 0, awaited, game.version, links, steps=rnd.randint(1, len(undoable)))
        return "undo"
    if roll < 0.115:
        other = "ask" if state.options.get("redeploy") == "auto" else "auto"
        admin.change_settings(session, game.id or 0, admin.HOST, links, redeploy=other)
        return "options"
    if roll < 0.125:
        admin.extend_deadline(session, game.id or 0, admin.HOST, links, by=timedelta(hours=1))
        return "extend"
    if roll < 0.13:
        admin.pause(session, game.id or 0, admin.HOST, links, "a break")
        admin.resume(session, game.id or 0, admin.HOST, links)
        return "pause"
    if roll < 0.132:
        seat = rnd.randrange(len(state.players))
        admin.replace_player(session, game.id or 0, admin.HOST, links, seat, f"new{rnd.random()}@example.org", "New")
        return "replace"
    action = random_player(state, rnd).to_json()
    seat = session.exec(select(Seat).where(Seat.game_id == game.id, Seat.seat == awaited)).one()
    # The house bot plays a seat after missed turns (the game's setting), and now and then a step of another.
    by_bot = seat.controller == SeatController.BOT or rnd.random() < 0.1
    play.submit_action(session, game.id or 0, awaited, action, game.version, links, by_bot=by_bot)
    return "bot" if by_bot else "action"


def bot_step(session: Session, game: Game, links: LinkMaker, rnd: random.Random) -> None:
    """The rules' random bot's step for whoever ``game`` awaits (``game`` read again after it)."""
    state = play.load_state(game)
    play.submit_action(session, game.id or 0, min(rules.awaiting(state)), random_player(state, rnd).to_json(),
                       game.version, links)  # fmt: skip
    session.refresh(game)


def turn_mails_after(session: Session, game: Game, after_id: int) -> list[tuple[int, Any]]:
    rows = session.exec(
        select(OutboxMail)
        .where(
            OutboxMail.game_id == game.id,
            col(OutboxMail.template).in_(["your_turn", "redeploy_needed"]),
            col(OutboxMail.id) > after_id,
        )
        .order_by(col(OutboxMail.id))
    ).all()
    return [(row.id or 0, from_json(row.template, row.context)) for row in rows]


def last_mail_id(session: Session) -> int:
    return session.exec(select(func.max(OutboxMail.id))).one() or 0


@pytest.mark.parametrize(("players", "seed", "redeploy"), [(5, 1, "ask"), (2, 4, "auto")])
def test_since_your_last_turn_from_the_stored_starts_is_the_whole_replays(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch, players: int, seed: int, redeploy: str
) -> None:
    counter = Counter(monkeypatch)
    rnd = random.Random(seed)
    game = new_game(db_session, players, f"since-{seed}", redeploy)
    done: dict[str, int] = {}
    mails = told = steps = 0
    while game.status == GameStatus.ACTIVE:
        before = last_mail_id(db_session)
        what = one_step(db_session, game, links, rnd, ACTS.get(steps, ""))
        done[what] = done.get(what, 0) + 1
        steps += 1
        db_session.refresh(game)
        if game.status != GameStatus.ACTIVE:
            break
        queued = turn_mails_after(db_session, game, before)
        if not queued and what in ("action", "bot") and steps % 3:
            continue  # a plain step without a mail: one in three is checked (the test's time)
        whole = play.told_turns(db_session, game)  # the reference: every turn replayed from the seed
        assert whole is not None
        names = seat_names(db_session, game)  # a seat given to someone else is told by its new name
        for _, mail in queued:  # told in the step's announcement (service.domain.announce)
            assert mail.since == story.since_words(whole, names, mail.seat), (what, game.version, mail.seat)
            mails += 1
        for seat in range(players):  # the turn page, mid-turn or waiting, as each seat would open it
            expected = story.since_words(whole, names, seat)
            assert from_stored_start(db_session, game, seat, names) == expected, (what, game.version, seat)
            told += 1
    state = play.load_state(game)
    assert state.over, "the game ran to its end"
    assert all(done.get(what) for what in ("undo", "auto_pass", "options", "extend", "pause", "replace", "bot")), done
    assert mails >= 5 * players and told > 100
    # The stored starts told nearly everything: the seed only the first round and the odd undo's aftermath.
    assert counter.stored > 4 * counter.seed, (counter.stored, counter.seed)
    kinds = set(db_session.exec(select(GameAction.kind).where(GameAction.game_id == game.id)).all())
    assert {ActionKind.OPTIONS, ActionKind.ADMIN, ActionKind.UNDO, ActionKind.AUTO_PASS} <= kinds
    if redeploy == "ask":  # the defenders' redeployments were told in another player's turn
        log = story.kept(
            db_session.exec(
                select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))
            ).all()
        )
        turns = story.turns_of(log, play.replay_steps(game, log))
        assert any(turn.defending for turn in turns)


def test_each_seat_keeps_its_last_two_turn_starts_and_the_common_step_writes_none(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, 3, "since-kept")
    rnd = random.Random(7)

    def starts() -> list[tuple[int, int]]:
        rows = db_session.exec(
            select(TurnStart.seat, TurnStart.version)
            .where(TurnStart.game_id == game.id)
            .order_by(col(TurnStart.version))
        ).all()
        return [(seat, version) for seat, version in rows]

    plain = changed = 0
    for _ in range(120):
        before, key = starts(), game.step_key
        bot_step(db_session, game, links, rnd)
        after = starts()
        new = play.load_state(game)
        if play.begins_turn(key, new):
            changed += 1
            assert after[-1] == (new.current, game.version)
            stored = db_session.get(TurnStart, (game.id, game.version))
            assert stored is not None and stored.state == new.to_json()
        else:
            plain += 1
            assert after == before  # neither written nor pruned
        for seat in range(3):
            assert len([s for s, _ in after if s == seat]) <= 2
    assert plain > changed > 10


def test_a_game_without_stored_starts_is_told_from_the_seed(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games started before the cache existed (or whose rows were dropped): the replay from the seed tells
    the same."""
    game = new_game(db_session, 4, "since-fallback", "ask")
    rnd = random.Random(11)
    while play.load_state(game).turn < 4:
        one_step(db_session, game, links, rnd)
        db_session.refresh(game)
    assert db_session.exec(select(func.count()).where(TurnStart.game_id == game.id)).one() > 0
    expected = [from_stored_start(db_session, game, seat) for seat in range(4)]
    assert any(expected)
    play.forget_turn_starts(db_session, game.id or 0)
    counter = Counter(monkeypatch)
    assert [from_stored_start(db_session, game, seat) for seat in range(4)] == expected
    assert (counter.stored, counter.seed) == (0, 4)
    # And the next turn mail, told without them too, is the whole replay's.
    before = last_mail_id(db_session)
    while not turn_mails_after(db_session, game, before):
        one_step(db_session, game, links, rnd)
        db_session.refresh(game)
    for _, mail in turn_mails_after(db_session, game, before):
        assert mail.since == whole_replay(db_session, game, mail.seat)


def test_a_log_that_does_not_replay_after_the_stored_start_is_told_without_its_story(
    db_session: Session, links: LinkMaker, caplog: pytest.LogCaptureFixture
) -> None:
    game = new_game(db_session, 3, "since-broken")
    rnd = random.Random(5)
    while play.load_state(game).turn < 3:
        bot_step(db_session, game, links, rnd)
    seat = play.load_state(game).current
    assert from_stored_start(db_session, game, (seat + 1) % 3)
    latest = db_session.exec(
        select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version).desc())
    ).first()
    assert latest is not None
    latest.action = {"type": "conquer", "player": latest.seat, "region": 99}  # a step the rules refuse
    db_session.add(latest)
    db_session.flush()
    with caplog.at_level(logging.WARNING):
        assert play.told_turns(db_session, game, readers=[(seat + 1) % 3]) is None
    assert "does not replay" in caplog.text


def test_the_stored_starts_go_when_the_game_ends_or_is_cancelled(db_session: Session, links: LinkMaker) -> None:
    ended = new_game(db_session, 2, "since-ended")
    rnd = random.Random(3)
    while ended.status == GameStatus.ACTIVE:
        bot_step(db_session, ended, links, rnd)
    assert db_session.exec(select(func.count()).where(TurnStart.game_id == ended.id)).one() > 0
    assert tally.tally_game(db_session, ended.id or 0)
    assert db_session.exec(select(func.count()).where(TurnStart.game_id == ended.id)).one() == 0

    cancelled = new_game(db_session, 2, "since-cancelled")
    for _ in range(30):
        bot_step(db_session, cancelled, links, rnd)
    assert db_session.exec(select(func.count()).where(TurnStart.game_id == cancelled.id)).one() > 0
    admin.cancel(db_session, cancelled.id or 0, admin.HOST, links)
    assert db_session.exec(select(func.count()).where(TurnStart.game_id == cancelled.id)).one() == 0


@pytest.mark.parametrize(("players", "seed", "redeploy"), [(5, 2, "ask"), (3, 5, "auto")])
def test_the_turn_pages_kept_words_are_what_the_whole_replay_tells_after_every_step(
    db_session: Session, links: LinkMaker, monkeypatch: pytest.MonkeyPatch, players: int, seed: int, redeploy: str
) -> None:
    """The turn page keeps a seat's "Since your last turn" once it has taken a step of its turn
    (``play.since_words_on_turn``): after every step or act, every seat's page says what the whole replay says."""
    whole_story = play.told_turns
    afresh = [0]

    def counted(*args: Any, **kwargs: Any) -> list[story.Turn] | None:
        afresh[0] += 1
        return whole_story(*args, **kwargs)

    monkeypatch.setattr(play, "told_turns", counted)
    play._SINCE_KEPT.clear()
    rnd = random.Random(seed)
    game = new_game(db_session, players, f"page-{seed}", redeploy)
    done: dict[str, int] = {}
    pages = 0
    for steps in range(160):
        what = one_step(db_session, game, links, rnd, ACTS.get(steps, ""))
        done[what] = done.get(what, 0) + 1
        db_session.refresh(game)
        if game.status != GameStatus.ACTIVE:
            break
        whole = whole_story(db_session, game)
        assert whole is not None
        names = seat_names(db_session, game)
        state = play.load_state(game)
        for seat in range(players):
            expected = story.since_words(whole, names, seat)
            assert play.since_words_on_turn(db_session, game, state, seat, names) == expected, (what, steps, seat)
            pages += 1
    assert all(done.get(what) for what in ("undo", "auto_pass", "options", "extend", "replace", "action")), done
    # The seat on turn's pages after its first step were read from what the process kept (a seat not on turn
    # is told afresh each time): a good third of the seat on turn's pages in these games of short turns.
    kept = pages - afresh[0]
    assert kept > 0.3 * pages / players, (pages, afresh[0])
