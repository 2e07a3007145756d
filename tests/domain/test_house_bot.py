"""``service.domain.bot_seats`` and ``service.domain.house_bot``: each way the house bot takes a seat (the
host, missed turns, at creation, another operation's transaction), its steps marked in the log, no mail to
a bot seat's address for its turns, and taking the seat back. The real worker plays a bot turn in
``tests/worker/test_house_bot_worker.py``."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import Session, col, select

import rules
from rules.bots import Budget
from service.domain import bot_seats, house_bot, lobby, play
from service.domain.errors import Conflict
from service.domain.links import TURN, LinkMaker
from service.domain.models import AuditEntry, Game, GameAction, OutboxMail, Seat, SeatController
from service.domain.schemas import HOUSE_BOT_EMAIL, CreateGame
from tests.factories import confirmed_game

#: Small: these tests are about who plays, not how well.
SMALL = Budget(worlds=1, breadth=2, deep_worlds=1, shortlist=1)
ANN, BO = "ann@example.org", "bo@example.org"


def new_game(session: Session, links: LinkMaker, **settings: Any) -> Game:
    request = CreateGame(
        name="Bots",
        players=[{"name": "Ann", "email": ANN}, {"name": "Bo", "email": BO}],
        settings={"start_when_all_accepted": False, **settings},
    )
    game, _ = confirmed_game(session, request, links)
    return game


def seat(session: Session, game: Game, number: int) -> Seat:
    return bot_seats.seat_row(session, game.id or 0, number)


def mails(session: Session, game: Game, template: str, to: str) -> list[OutboxMail]:
    query = select(OutboxMail).where(
        OutboxMail.game_id == game.id, OutboxMail.template == template, OutboxMail.to_email == to
    )
    return list(session.exec(query.order_by(col(OutboxMail.id))).all())


def log(session: Session, game: Game) -> list[GameAction]:
    query = select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))
    return list(session.exec(query).all())


def awaited(game: Game) -> int:
    return min(rules.awaiting(play.load_state(game)))


def test_the_host_gives_a_seat_to_the_bot_which_plays_its_turns_without_mailing_it(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links)
    assert len(mails(db_session, game, "your_turn", ANN)) == 1
    bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 0, "host", links)
    assert seat(db_session, game, 0).controller == SeatController.BOT
    [told] = mails(db_session, game, "seat_to_bot", ANN)
    assert told.context["reason"] == "the host gave it your seat"
    # The seat's own turn link (signed with the time it was made: compared by what it opens, not by its text).
    take_back, expected = (
        told.context["take_back_url"],
        links.turn_url(game.id or 0, 0, seat(db_session, game, 0).secret, serial=0),
    )
    assert take_back.rsplit("/", 1)[0] == expected.rsplit("/", 1)[0]
    assert links.signer.verify(TURN, take_back.rsplit("/", 1)[1]) == links.signer.verify(
        TURN, expected.rsplit("/", 1)[1]
    )

    report = house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    assert report.steps >= 2 and not report.passed  # at least a pick and the end of the turn
    db_session.refresh(game)
    assert awaited(game) == 1
    steps = log(db_session, game)
    assert steps and all(s.by_bot and s.seat == 0 for s in steps)

    play.auto_pass(db_session, game.id or 0, 1, links)  # Bo's turn passes: seat 0 again, the bot's
    assert len(mails(db_session, game, "your_turn", ANN)) == 1  # none for the turns the bot plays
    house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    db_session.refresh(game)
    assert awaited(game) == 1 and game.state is not None and game.state["turn"] == 2
    assert [s.by_bot for s in log(db_session, game) if s.seat == 1] == [False]


def test_a_bot_step_is_played_once_and_a_late_task_plays_nothing(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 0, "host", links)
    first = house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    version = game.version
    again = house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    assert first.steps and again.steps == 0
    db_session.refresh(game)
    assert game.version == version
    keys = [s.idempotency_key for s in log(db_session, game)]
    assert len(keys) == len(set(keys)) == first.steps


def test_the_same_seed_gives_the_same_bot_moves(db_session: Session, links: LinkMaker) -> None:
    moves = []
    for _ in range(2):
        game = new_game(db_session, links)
        game.seed = "same seed"
        game.state = rules.new_game(2, seed="same seed").to_json()
        db_session.add(game)
        db_session.commit()
        bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 0, "host", links)
        house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
        moves.append([s.action for s in log(db_session, game)])
    assert moves[0] == moves[1] and moves[0]


def test_missed_turns_in_a_row_give_the_seat_to_the_bot(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, bot_after_missed_turns=2)
    play.auto_pass(db_session, game.id or 0, 0, links)
    play.auto_pass(db_session, game.id or 0, 1, links)
    assert seat(db_session, game, 0).controller == SeatController.PERSON  # one missed turn
    play.auto_pass(db_session, game.id or 0, 0, links)
    assert seat(db_session, game, 0).controller == SeatController.BOT
    assert seat(db_session, game, 1).controller == SeatController.PERSON
    [told] = mails(db_session, game, "seat_to_bot", ANN)
    assert told.context["reason"] == "you missed 2 turns in a row"
    assert len(mails(db_session, game, "auto_passed", ANN)) == 2  # the missed turns were hers, and told


def test_missed_turns_never_give_a_seat_away_with_the_setting_at_zero(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, bot_after_missed_turns=0)
    for _ in range(4):
        play.auto_pass(db_session, game.id or 0, awaited(game), links)
        db_session.refresh(game)
    assert {seat(db_session, game, n).controller for n in (0, 1)} == {SeatController.PERSON}


def test_the_player_takes_the_seat_back_and_gets_turn_mail_again(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 0, "host", links)
    house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    bot_seats.take_seat_back(db_session, game.id or 0, 0)
    assert seat(db_session, game, 0).controller == SeatController.PERSON
    acts = db_session.exec(select(AuditEntry.act).where(AuditEntry.game_id == game.id)).all()
    assert {"bot", "unbot"} <= set(acts)
    play.auto_pass(db_session, game.id or 0, 1, links)
    assert len(mails(db_session, game, "your_turn", ANN)) == 2  # the first turn's, and this one
    assert house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL).steps == 0
    with pytest.raises(Conflict, match="play this seat already"):
        bot_seats.take_seat_back(db_session, game.id or 0, 0)


def test_a_seat_given_twice_is_refused(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 1, "host", links)
    with pytest.raises(Conflict, match="already plays seat 2"):
        bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, 1, "host", links)


def test_give_seat_to_bot_is_part_of_the_callers_transaction(db_session: Session, links: LinkMaker) -> None:
    """Another operation (a resignation) gives the seat in its own transaction: nothing stays if it rolls
    back, and its commit keeps the seat's new controller and the mail together."""
    game = new_game(db_session, links)
    bot_seats.give_seat_to_bot(db_session, game, 1, "you resigned", links=links)
    db_session.rollback()
    assert seat(db_session, game, 1).controller == SeatController.PERSON
    assert mails(db_session, game, "seat_to_bot", BO) == []
    bot_seats.give_seat_to_bot(db_session, game, 1, "you resigned", links=links)
    db_session.commit()
    assert seat(db_session, game, 1).controller == SeatController.BOT
    assert [m.context["reason"] for m in mails(db_session, game, "seat_to_bot", BO)] == ["you resigned"]


def test_a_host_plays_against_bots_marked_at_creation(db_session: Session, links: LinkMaker) -> None:
    request = CreateGame(
        name="Against bots",
        players=[{"name": "Ann", "email": ANN}, {"name": "Robot", "bot": True}, {"name": "Robot 2", "bot": True}],
    )
    game, _ = confirmed_game(db_session, request, links)
    assert game.status == "inviting"
    invited = db_session.exec(select(OutboxMail.to_email).where(OutboxMail.template == "invitation")).all()
    assert invited == [ANN]  # nobody to invite for the bots' seats
    assert [seat(db_session, game, n).controller for n in (0, 1, 2)] == ["person", "bot", "bot"]
    assert not db_session.exec(select(OutboxMail).where(OutboxMail.to_email == HOUSE_BOT_EMAIL)).all()
    lobby.accept_invitation(db_session, game.id or 0, 0, links)
    db_session.refresh(game)
    assert game.status == "active"  # the bots' seats were accepted from the start
    play.auto_pass(db_session, game.id or 0, 0, links)
    house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    db_session.refresh(game)
    assert awaited(game) == 2  # seat 1 played by the bot; seat 2's task comes after that commit
    house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL)
    db_session.refresh(game)
    assert awaited(game) == 0 and play.load_state(game).turn == 2
    with pytest.raises(Conflict, match="made for the house bot"):
        bot_seats.take_seat_back(db_session, game.id or 0, 1)


def test_a_game_of_the_house_bot_alone_starts_when_its_host_confirms_it(db_session: Session, links: LinkMaker) -> None:
    """Every seat the bot's, accepted at creation: nobody is left to accept, so confirming starts it (the sweep
    no longer looks at every inviting game each time, only at those a seat of which accepted since its last)."""
    request = CreateGame(
        name="Bots only",
        host_email=ANN,
        players=[{"name": "Robot", "bot": True}, {"name": "Robot 2", "bot": True}],
    )
    game, _ = confirmed_game(db_session, request, links)
    db_session.refresh(game)
    assert (game.status, game.version) == ("active", 1)
    assert [seat(db_session, game, n).controller for n in (0, 1)] == ["bot", "bot"]


@pytest.mark.parametrize(
    ("players", "problem"),
    [
        ([{"name": "A", "email": ANN}, {"name": "B"}], "each player needs an address"),
        ([{"name": "A", "email": ANN}, {"name": "B", "email": BO, "bot": True}], "has no address"),
        ([{"name": "B", "bot": True}, {"name": "A", "email": ANN}], "host_email: needed"),
    ],
)
def test_a_bot_seat_at_creation_is_checked(players: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        CreateGame(name="Checked", players=players)


def test_a_bot_seat_redeploys_as_a_defender_in_ask_mode(db_session: Session, links: LinkMaker) -> None:
    """Two bot seats in ``ask`` mode: when one attacks the other, the defender's redeploy step is the
    bot's too (played, not left to its deadline)."""
    game = new_game(db_session, links, redeploy="ask")
    game.seed = "a game with attacks"  # the same game every run (the bots' moves follow from the seed)
    game.state = rules.new_game(2, seed=game.seed, options={"redeploy": "ask"}).to_json()
    db_session.add(game)
    db_session.commit()
    for number in (0, 1):
        bot_seats.host_gives_seat_to_bot(db_session, game.id or 0, number, "host", links)
    defended = []
    for _ in range(40):
        if house_bot.play_bot_turns(db_session, game.id or 0, links, budget=SMALL).steps == 0:
            break
        entries = log(db_session, game)
        states = play.replay_steps(game, entries)
        before = next(states)
        defended = []
        for entry, after in zip(entries, states, strict=True):
            if before.phase == "defend" and entry.seat in before.defenders[:1]:
                defended.append(entry)
            before = after
        if defended:
            break
    assert defended, "an attack on a bot seat in ask mode, and its redeploy step"
    assert all(entry.by_bot for entry in defended)
    assert all(entry.seat in (0, 1) for entry in defended)
