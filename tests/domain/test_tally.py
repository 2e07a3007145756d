"""service.domain.tally: the end of a game as the worker does it (ARCHITECTURE §9), once, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

import rules
from rules.bots import random_action
from service.domain import deadlines, play, tally, views
from service.domain import records as records_module
from service.domain.links import LinkMaker
from service.domain.models import (
    Game,
    GameAction,
    GameResult,
    GameStatus,
    OutboxMail,
    Player,
    PlayerRecord,
    utcnow,
)
from service.domain.schemas import CreateGame
from service.infra.db import make_engine, upgrade_database
from tests.factories import confirmed_game


def new_game(session: Session, links: LinkMaker, players: int = 3, tag: str = "p") -> Game:
    request = CreateGame.model_validate(
        {
            "name": "Tally test",
            "players": [{"name": f"Player {i}", "email": f"{tag}{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False},
        }
    )
    game, _ = confirmed_game(session, request, links)
    return game


def play_until_ending(
    session: Session, game: Game, links: LinkMaker, *, miss: int | None = None, seed: int = 1
) -> None:
    """Play random legal steps; ``miss``'s steps are passed by their deadline instead (a missed deadline)."""
    rnd = random.Random(seed)
    for _ in range(5000):
        session.refresh(game)
        if game.status != GameStatus.ACTIVE:
            return
        state = play.load_state(game)
        seat = min(rules.awaiting(state))
        if seat == miss:
            play.auto_pass(session, game.id or 0, seat, links, reason="deadline")
            continue
        action = random_action(state, seat, rnd).to_json()
        play.submit_action(session, game.id or 0, seat, action, game.version, links)
    raise AssertionError("the game did not end")


def mails(session: Session, game_id: int, template: str) -> list[OutboxMail]:
    return list(
        session.exec(select(OutboxMail).where(OutboxMail.game_id == game_id, OutboxMail.template == template)).all()
    )


def records(session: Session) -> dict[str, PlayerRecord]:
    rows = session.exec(select(Player.email, PlayerRecord).where(col(Player.id) == col(PlayerRecord.player_id)))
    return {email: record for email, record in rows.all()}


def test_the_last_step_marks_the_game_ending_and_keeps_the_coins_hidden_until_the_tally(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links)
    play_until_ending(db_session, game, links)
    assert game.status == GameStatus.ENDING and game.deadline_at is None and game.step_key is None
    assert game.result is None and mails(db_session, game.id or 0, "game_over") == []
    view = views.game_view(db_session, game, 1)
    assert view.status == "ending" and view.result is None and view.seed is None and view.awaiting == []
    others = [p["coins"] for n, p in enumerate((view.state or {})["players"]) if n != 1]
    assert others == [None, None], "another seat's coins before the tally"


def test_the_tally_stores_results_rates_records_mails_once_and_finishes(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links)
    play_until_ending(db_session, game, links, miss=2)
    game_id = game.id or 0

    assert tally.tally_game(db_session, game_id) is True
    assert tally.tally_game(db_session, game_id) is False  # a second delivery of the task: nothing

    db_session.refresh(game)
    assert game.status == GameStatus.FINISHED
    standings = rules.final_standings(play.load_state(game))
    assert [(r["player"], r["place"], r["coins"]) for r in game.result or []] == [
        (r["player"], r["place"], r["coins"]) for r in standings
    ]
    results = db_session.exec(select(GameResult).where(GameResult.game_id == game_id).order_by(GameResult.seat)).all()
    assert [r.seat for r in results] == [0, 1, 2]
    assert sorted(m.context["your_seat"] for m in mails(db_session, game_id, "game_over")) == [0, 1, 2]
    by_address = records(db_session)
    assert {e: r.games_finished for e, r in by_address.items()} == {f"p{i}@example.org": 1 for i in range(3)}
    # Seat 2 let every deadline of its own pass; the others none.
    turns = play.load_state(game).turns
    assert by_address["p2@example.org"].deadlines_missed == by_address["p2@example.org"].deadlines >= turns
    assert by_address["p0@example.org"].deadlines_missed == 0 and by_address["p0@example.org"].deadlines >= turns
    # Ratings: one Plackett–Luce update from the starting rating, the order following the places.
    fresh = {r.player_id: PlayerRecord(player_id=r.player_id, rating_mu=25.0, rating_sigma=25 / 3) for r in results}
    expected = tally.rate({r.player_id: r.place for r in results}, fresh)
    for result in results:
        assert (result.rating_mu_before, result.rating_sigma_before) == (25.0, pytest.approx(25 / 3))
        assert (result.rating_mu, result.rating_sigma) == pytest.approx(expected[result.player_id])
    winner = min(results, key=lambda r: r.place)
    assert winner.rating_mu > 25.0


def test_ratings_carry_from_one_game_to_the_next(db_session: Session, links: LinkMaker) -> None:
    first = new_game(db_session, links, players=2, tag="q")
    play_until_ending(db_session, first, links, seed=3)
    tally.tally_game(db_session, first.id or 0)
    after_first = {e: (r.rating_mu, r.rating_sigma) for e, r in records(db_session).items()}
    second = new_game(db_session, links, players=2, tag="q")
    play_until_ending(db_session, second, links, seed=4)
    tally.tally_game(db_session, second.id or 0)
    results = db_session.exec(select(GameResult).where(GameResult.game_id == second.id)).all()
    emails = {p.id: p.email for p in db_session.exec(select(Player)).all()}
    for result in results:
        assert (result.rating_mu_before, result.rating_sigma_before) == after_first[emails[result.player_id]]
    assert {r.games_finished for r in records(db_session).values()} == {2}


def test_ties_are_ties() -> None:
    fresh = {n: PlayerRecord(player_id=n, rating_mu=25.0, rating_sigma=25 / 3) for n in (1, 2, 3, 4)}
    rated = tally.rate({1: 2, 2: 1, 3: 2, 4: 4}, fresh)
    assert rated[1] == rated[3]
    assert rated[2][0] > rated[1][0] > rated[4][0]


def test_the_sweep_tallies_a_game_left_ending_and_leaves_a_fresh_one_to_its_task(
    db_session: Session, links: LinkMaker
) -> None:
    game = new_game(db_session, links, players=2)
    play_until_ending(db_session, game, links)
    ended = game.finished_at
    assert ended is not None
    early = deadlines.sweep(db_session, links, now=ended + tally.LEFT_ENDING_AFTER / 2)
    assert early.tallied == 0
    db_session.refresh(game)
    assert game.status == GameStatus.ENDING
    late = deadlines.sweep(db_session, links, now=ended + tally.LEFT_ENDING_AFTER * 2)
    assert late.tallied == 1
    db_session.refresh(game)
    assert game.status == GameStatus.FINISHED
    assert deadlines.sweep(db_session, links, now=ended + tally.LEFT_ENDING_AFTER * 3).tallied == 0
    assert len(mails(db_session, game.id or 0, "game_over")) == 2


@pytest.fixture
def pg_engine(postgres_url: str) -> Engine:
    engine = make_engine(postgres_url)
    upgrade_database(engine)
    return engine


def test_concurrent_tallies_of_one_game_and_of_games_sharing_players_each_happen_once(
    pg_engine: Engine, links: LinkMaker
) -> None:
    """Eight threads, each its own connection, tally two games that share an address, all at once."""
    with Session(pg_engine) as session:
        games = [new_game(session, links, players=3, tag="s"), new_game(session, links, players=2, tag="s")]
        for seed, game in enumerate(games):
            play_until_ending(session, game, links, seed=seed)
        ids = [game.id or 0 for game in games]
    outcomes: list[tuple[int, bool]] = []
    barrier = threading.Barrier(8)

    def run(game_id: int) -> Callable[[], None]:
        def go() -> None:
            with Session(pg_engine) as session:
                barrier.wait()
                outcomes.append((game_id, tally.tally_game(session, game_id, now=utcnow())))

        return go

    threads = [threading.Thread(target=run(ids[n % 2])) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(game_id for game_id, did in outcomes if did) == sorted(ids)
    assert len(outcomes) == 8
    with Session(pg_engine) as session:
        assert {e: r.games_finished for e, r in records(session).items()} == {
            "s0@example.org": 2,
            "s1@example.org": 2,
            "s2@example.org": 1,
        }
        for game_id, seats in zip(ids, (3, 2), strict=True):
            assert len(mails(session, game_id, "game_over")) == seats
            assert len(session.exec(select(GameResult).where(GameResult.game_id == game_id)).all()) == seats
    pg_engine.dispose()


def test_an_address_record_reads_what_the_tally_wrote(db_session: Session, links: LinkMaker) -> None:
    game = new_game(db_session, links, players=2, tag="r")
    assert records_module.address_record(db_session, "r0@example.org") == records_module.NO_RECORD
    play_until_ending(db_session, game, links, miss=1, seed=5)
    tally.tally_game(db_session, game.id or 0)
    mine = records_module.address_record(db_session, " R0@Example.org ")
    theirs = records_module.address_record(db_session, "r1@example.org")
    assert mine.games == theirs.games == 1
    assert mine.missed == 0 and theirs.missed == theirs.deadlines > 0
    assert theirs.words.startswith("1 game, missed 100 % of deadlines, rating ")
    by_id = records_module.records_of(db_session, [p.id or 0 for p in db_session.exec(select(Player)).all()])
    assert sorted(r.games for r in by_id.values()) == [1, 1]


def test_invitations_show_each_player_s_record_beside_their_name(db_session: Session, links: LinkMaker) -> None:
    first = new_game(db_session, links, players=2, tag="v")
    invited = mails(db_session, first.id or 0, "invitation")
    assert sorted(m.context["records"][0] for m in invited) == ["Player 0: no finished game yet"] * 2
    play_until_ending(db_session, first, links, miss=1, seed=6)
    tally.tally_game(db_session, first.id or 0)
    second = new_game(db_session, links, players=2, tag="v")
    [mail, _] = mails(db_session, second.id or 0, "invitation")
    mine, theirs = mail.context["records"]
    assert mine.startswith("Player 0: 1 game, missed no deadline, rating ")
    assert theirs.startswith("Player 1: 1 game, missed 100 % of deadlines, rating ")


def test_a_game_whose_log_no_longer_replays_is_tallied_all_the_same(db_session: Session, links: LinkMaker) -> None:
    """A hand-repaired row (its log no longer replays from the seed) must not stay ending for ever."""
    game = new_game(db_session, links, players=2, tag="h")
    play_until_ending(db_session, game, links, miss=0, seed=8)
    first = db_session.exec(
        select(GameAction).where(GameAction.game_id == game.id).order_by(col(GameAction.version))
    ).first()
    assert first is not None
    first.action = {"type": "pick", "combo": 99, "player": first.seat}
    db_session.add(first)
    db_session.commit()
    assert tally.tally_game(db_session, game.id or 0) is True
    db_session.refresh(game)
    assert game.status == GameStatus.FINISHED
    record = records_module.address_record(db_session, "h0@example.org")
    assert record.games == 1 and 0 < record.missed <= record.deadlines
