"""Domain operations on rows built by the factories; every test rolls back."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

import rules
from service.domain import play, views
from service.domain.errors import Conflict, IllegalMove
from service.domain.games import seats_of
from service.domain.links import LinkMaker
from service.domain.models import ActionKind, Game, GameAction, OutboxMail
from service.domain.schemas import CreateGame
from tests.factories import GameFactory, PlayerFactory, SeatFactory, confirmed_game


def started_game(session: Session, players: int = 2) -> Game:
    game = GameFactory(started=True, players=players)
    for seat in range(players):
        SeatFactory(game_id=game.id, player_id=PlayerFactory().id, seat=seat)
    session.flush()
    return game


def test_the_factories_build_a_game_the_domain_can_play(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    result = play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 0}, 1, links)
    assert result.version == 2
    assert result.last["kind"] == "pick"
    assert db_session.exec(select(GameAction).where(GameAction.game_id == game.id)).one().version == 2


def test_each_test_starts_from_an_empty_database(db_session: Session) -> None:
    # The game of the test above was rolled back.
    assert db_session.exec(select(Game)).all() == []


def test_a_stale_version_is_refused_and_changes_nothing(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    before = dict(game.state or {})
    with pytest.raises(Conflict) as refused:
        play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 0}, 0, links)
    assert refused.value.extra["version"] == 1
    db_session.refresh(game)
    assert game.version == 1 and game.state == before


def test_an_illegal_move_carries_the_rules_message(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    with pytest.raises(IllegalMove, match="no Active race to put In Decline"):
        play.submit_action(db_session, game.id, 0, {"type": "decline", "player": 0}, 1, links)
    with pytest.raises(IllegalMove, match="your own seat"):
        play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 0, "player": 1}, 1, links)


def test_not_your_turn_is_a_conflict(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    with pytest.raises(Conflict, match="not your turn"):
        play.submit_action(db_session, game.id, 1, {"type": "pick", "combo": 0}, 1, links)


def test_the_same_idempotency_key_applies_once(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    first = play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 1}, 1, links, idempotency_key="k1")
    again = play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 1}, 1, links, idempotency_key="k1")
    assert (first.version, first.replayed) == (2, False)
    assert (again.version, again.replayed) == (2, True)
    assert len(db_session.exec(select(GameAction).where(GameAction.game_id == game.id)).all()) == 1


def test_undo_goes_back_to_the_last_undo_point_only(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": 0}, 1, links)
    state = rules.read_state(game.state)
    after_pick = state.to_json()
    conquest = next(a for a in rules.legal_actions(state, 0) if a.type == "conquer")
    play.submit_action(db_session, game.id, 0, conquest.to_json(), 2, links)
    undone = play.undo(db_session, game.id, 0, 3, links)
    assert undone.version == 4
    restored = rules.read_state(undone.game.state)
    assert [r.to_json() if hasattr(r, "to_json") else r for r in restored.to_json()["regions"]] == after_pick["regions"]
    # The pick revealed the next combo: it cannot be undone.
    with pytest.raises(IllegalMove, match="Nothing to undo"):
        play.undo(db_session, game.id, 0, 4, links)


def test_player_view_never_shows_another_seats_coins(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session, players=3)
    view = views.game_view(db_session, game, 1)
    coins = [p["coins"] for p in view.state["players"]]
    assert coins == [None, 5, None]
    assert view.seed is None


def test_create_game_writes_invitations_and_the_admin_link(db_session: Session, links: LinkMaker) -> None:
    request = CreateGame(
        name="Friday", players=[{"name": "Ann", "email": "Ann@Example.org"}, {"name": "Bo", "email": "bo@example.org"}]
    )
    game, admin_url = confirmed_game(db_session, request, links)
    mails = db_session.exec(
        select(OutboxMail).where(OutboxMail.game_id == game.id, OutboxMail.template != "confirm_game")
    ).all()
    assert sorted(m.template for m in mails) == ["admin_link", "invitation", "invitation"]
    assert {m.to_email for m in mails} == {"ann@example.org", "bo@example.org"}
    assert admin_url.startswith("https://smallworld.example/admin/")
    assert game.status == "inviting" and game.state is None


def test_a_host_without_a_seat_hears_of_repeated_auto_passes(db_session: Session, links: LinkMaker) -> None:
    request = CreateGame(
        name="Hosted",
        host_email="organiser@example.org",
        players=[{"name": "Ann", "email": "ann@example.org"}, {"name": "Bo", "email": "bo@example.org"}],
        settings={"start_when_all_accepted": False, "auto_pass_alert_after": 1},
    )
    game, _ = confirmed_game(db_session, request, links)
    play.auto_pass(db_session, game.id, 0, links)
    alerts = db_session.exec(select(OutboxMail).where(OutboxMail.template == "host_alert")).all()
    assert [m.to_email for m in alerts] == ["organiser@example.org"]
    assert alerts[0].context["yourself"] is False


def test_a_host_who_missed_their_own_turns_is_told_so_as_you(db_session: Session, links: LinkMaker) -> None:
    """Issue 34, finding 9: the host alerted about their own missed turns read "them"."""
    request = CreateGame(
        name="Hosted",
        host_email="ann@example.org",
        players=[{"name": "Ann", "email": "ann@example.org"}, {"name": "Bo", "email": "bo@example.org"}],
        settings={"start_when_all_accepted": False, "auto_pass_alert_after": 1},
    )
    game, _ = confirmed_game(db_session, request, links)
    play.auto_pass(db_session, game.id, 0, links)
    [alert] = db_session.exec(select(OutboxMail).where(OutboxMail.template == "host_alert")).all()
    assert alert.to_email == "ann@example.org" and alert.context["yourself"] is True


def picked_and_conquered_twice(session: Session, links: LinkMaker) -> tuple[Game, list[rules.GameState]]:
    """Seat 0 picks, then conquers two regions: the states after the pick and after each conquest."""
    game = started_game(session)
    play.submit_action(session, game.id, 0, {"type": "pick", "combo": 0}, 1, links)
    states = [rules.read_state(game.state)]
    for version in (2, 3):
        conquest = next(a for a in rules.legal_actions(states[-1], 0) if a.type == "conquer")
        play.submit_action(session, game.id, 0, conquest.to_json(), version, links)
        states.append(rules.read_state(game.state))
    return game, states


def test_undo_steps_name_each_step_back_to_the_last_undo_point(db_session: Session, links: LinkMaker) -> None:
    game, states = picked_and_conquered_twice(db_session, links)
    steps = play.undo_steps(db_session, game, 0)
    # Latest first; the pick revealed the next combo (ARCHITECTURE §4), so it is not listed.
    assert [(s.version, s.kind, s.back) for s in steps] == [(4, "conquer", 1), (3, "conquer", 2)]
    for step, before, after in zip(steps, [states[1], states[0]], [states[2], states[1]], strict=True):
        action = rules.Action.from_json(
            next(e.action for e in play.live_log(db_session, game.id) if e.version == step.version)
        )
        names = [s.display_name for s, _ in sorted(seats_of(db_session, game.id), key=lambda sp: sp[0].seat)]
        assert step.words == rules.tell(before, after, action, names, viewer=0)
        assert step.words.startswith(names[0] + " conquered ")
    assert play.undo_steps(db_session, game, 1) == []  # not seat 1's turn


def test_undo_one_step_at_a_time(db_session: Session, links: LinkMaker) -> None:
    game, states = picked_and_conquered_twice(db_session, links)
    undone = play.undo(db_session, game.id, 0, 4, links, steps=1)
    assert undone.last["undone"] == 1
    assert rules.read_state(undone.game.state).regions == states[1].regions
    assert [s.back for s in play.undo_steps(db_session, game, 0)] == [1]
    with pytest.raises(IllegalMove, match="only your last step can be undone"):
        play.undo(db_session, game.id, 0, 5, links, steps=2)
    undone = play.undo(db_session, game.id, 0, 5, links, steps=1)
    assert rules.read_state(undone.game.state).regions == states[0].regions
    assert play.undo_steps(db_session, game, 0) == []


def test_undo_to_an_earlier_step_takes_back_those_after_it(db_session: Session, links: LinkMaker) -> None:
    game, states = picked_and_conquered_twice(db_session, links)
    with pytest.raises(IllegalMove, match="only your last 2 steps"):
        play.undo(db_session, game.id, 0, 4, links, steps=3)
    undone = play.undo(db_session, game.id, 0, 4, links, steps=2)
    assert undone.last["undone"] == 2
    assert rules.read_state(undone.game.state).regions == states[0].regions


def test_an_event_row_has_the_models_defaults_and_refuses_what_is_not_a_column() -> None:
    # play.new_event writes the log entry's INSERT without an ORM object: the row must read as the model would
    # have written it.
    row = play.new_event(game_id=1, kind=ActionKind.ACTION, action={"type": "decline"}, version=3)
    made = GameAction(game_id=1, kind=ActionKind.ACTION, action={"type": "decline"}, version=3)
    assert row.keys() == {column.name for column in GameAction.__table__.columns} - {"id"}  # type: ignore[attr-defined]
    assert {name: value for name, value in row.items() if name != "created_at"} == {
        name: getattr(made, name) for name in row if name != "created_at"
    }
    assert row["created_at"].tzinfo is not None
    with pytest.raises(TypeError, match="not a column"):
        play.new_event(game_id=1, kind=ActionKind.ACTION, version=3, undo=True)
    with pytest.raises(TypeError, match="needs version"):
        play.new_event(game_id=1, kind=ActionKind.ACTION)
