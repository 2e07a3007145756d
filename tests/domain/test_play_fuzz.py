"""Fuzzing ``service.domain.play.submit_action`` with malformed actions (hypothesis).

Every example builds a game at a random point of a random game (the rules' own bot plays a few steps), then
submits something: arbitrary JSON, an action of a known type with random fields, or a legal action with one
field broken. Whatever it is, the operation either applies it (and then the rules accept it too) or refuses
it with a :class:`DomainError` whose status is 400, 409 or 422, and a refusal changes nothing: not the
game's state or version, not its log, not its outbox. Never another exception (that would be a 500).
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, func, select

import rules
from rules.actions import ACTION_FIELDS
from rules.bots import concrete
from service.domain import play
from service.domain.errors import DomainError
from service.domain.links import LinkMaker
from service.domain.models import Game, GameAction, OutboxMail
from tests.factories import GameFactory, PlayerFactory, SeatFactory

FIELDS = sorted({name for names in ACTION_FIELDS.values() for name in names} | {"type", "player", "count"})

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=60),
    st.integers(),
    st.floats(),  # NaN and ±Infinity too: Python's json module reads them
    st.text(max_size=6),
    st.sampled_from(["active", "declined", "0", "1", "-1", "1e3", ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=10,
)
typed_actions = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(ACTION_FIELDS)) | st.text(max_size=8) | json_values},
    optional={name: json_values for name in FIELDS if name != "type"},
)


def broken(action: dict[str, Any], draw: Any) -> dict[str, Any]:
    """A legal action with one thing wrong (or, rarely, still legal)."""
    action = copy.deepcopy(action)
    how = draw(st.sampled_from(["drop", "replace", "add", "retype", "nest"]))
    keys = sorted(action)
    if how == "drop":
        action.pop(draw(st.sampled_from(keys)))
    elif how == "replace":
        action[draw(st.sampled_from(keys))] = draw(json_values)
    elif how == "add":
        action[draw(st.sampled_from(FIELDS) | st.text(max_size=5))] = draw(json_values)
    elif how == "retype":
        action["type"] = draw(st.sampled_from(sorted(ACTION_FIELDS)))
    else:
        for value in action.values():
            if isinstance(value, dict) and value:
                inner = draw(st.sampled_from(sorted(value)))
                value[inner] = draw(json_values)
                break
            if isinstance(value, list) and value:
                value[draw(st.integers(0, len(value) - 1))] = draw(json_values)
                break
        else:
            action[draw(st.sampled_from(keys))] = [draw(json_values)]
    return action


def game_in_progress(session: Session, players: int, seed: int, steps: int) -> tuple[Game, rules.GameState]:
    """A started game after ``steps`` steps of the bot (fewer if it ends first)."""
    rnd = random.Random(seed)
    state = rules.new_game(players, seed=str(seed))
    for _ in range(steps):
        if state.over:
            break
        seat = min(rules.awaiting(state))
        state = rules.apply(state, concrete(rnd.choice(rules.legal_actions(state, seat)), rnd))
    game = GameFactory(started=True, players=players, seed=str(seed), state=state.to_json(), version=1 + steps)
    for seat in range(players):
        SeatFactory(game_id=game.id, player_id=PlayerFactory().id, seat=seat)
    session.flush()
    return game, state


def snapshot(session: Session, game_id: int) -> tuple[Any, ...]:
    session.expire_all()
    game = session.get(Game, game_id)
    assert game is not None
    actions = session.exec(select(func.count()).select_from(GameAction).where(GameAction.game_id == game_id)).one()
    mails = session.exec(select(func.count()).select_from(OutboxMail).where(OutboxMail.game_id == game_id)).one()
    return game.version, game.status, copy.deepcopy(game.state), game.deadline_at, actions, mails


def rules_accept(state: rules.GameState, payload: Any, seat: int) -> bool:
    if not isinstance(payload, dict):
        return False
    payload = dict(payload)
    if payload.setdefault("player", seat) != seat:
        return False
    try:
        rules.apply(state, payload)
    except rules.IllegalAction:
        return False
    return True


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_malformed_action_is_refused_with_a_domain_error_and_changes_nothing(
    data: Any, db_session: Session, links: LinkMaker
) -> None:
    players = data.draw(st.integers(2, 5), label="players")
    seed = data.draw(st.integers(0, 10_000), label="seed")
    steps = data.draw(st.integers(0, 40), label="steps")
    game, state = game_in_progress(db_session, players, seed, steps)
    if state.over:
        return
    awaited = sorted(rules.awaiting(state))
    # Mostly the awaited seat against the current version, so most examples reach the rules.
    other_seat = data.draw(st.integers(0, 9), label="other seat") == 0
    seat = data.draw(st.integers(0, players - 1)) if other_seat else data.draw(st.sampled_from(awaited), label="seat")
    legal = [concrete(a, random.Random(seed)).to_json() for a in rules.legal_actions(state, awaited[0])]
    kind = data.draw(st.sampled_from(["anything", "typed", "broken legal"]), label="kind")
    if kind == "anything":
        payload = data.draw(json_values, label="payload")
    elif kind == "typed":
        payload = data.draw(typed_actions, label="payload")
    else:
        payload = broken(data.draw(st.sampled_from(legal), label="legal"), data.draw)
    stale = data.draw(st.integers(0, 9), label="stale") == 0
    version = data.draw(st.integers(0, 100), label="version") if stale else game.version
    before = snapshot(db_session, game.id)
    submitted = copy.deepcopy(payload)

    try:
        play.submit_action(db_session, game.id, seat, payload, version, links)
    except DomainError as refusal:
        assert refusal.status in (400, 409, 422), refusal
        assert refusal.message and "Traceback" not in refusal.message
        assert snapshot(db_session, game.id) == before, f"refused {submitted!r}, yet the game changed"
        return
    # Applied: then it was a legal step by the awaited seat, against the current version.
    assert version == before[0] and seat in awaited
    assert rules_accept(state, submitted, seat), f"the domain applied {submitted!r}, which the rules refuse"
    assert snapshot(db_session, game.id)[0] == before[0] + 1


def test_floats_that_are_not_numbers_are_refused(db_session: Session, links: LinkMaker) -> None:
    game, _ = game_in_progress(db_session, 2, 1, 0)
    for value in (math.nan, math.inf, -math.inf, 1e300, 0.5):
        before = snapshot(db_session, game.id)
        try:
            play.submit_action(db_session, game.id, 0, {"type": "pick", "combo": value}, game.version, links)
        except DomainError as refusal:
            assert refusal.status == 422
        else:
            raise AssertionError(f"combo {value!r} was accepted")
        assert snapshot(db_session, game.id) == before
