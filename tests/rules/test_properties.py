"""Property tests: random legal games on all four boards, checked after every step.

Hypothesis draws the game (seed, players, board, redeploy mode, how often deadlines are missed,
which bot); a ``random.Random`` seeded from the draw plays it with ``rules.bots``. After every step:
``tests/rules/invariants.py`` (which also round-trips the JSON), ``apply``/``auto_pass`` never
change their input, and at the end the game replays exactly from its seed and action log and the
standings agree with the state. Two smaller runs check that every action ``legal_actions`` offers
applies, and that illegal or malformed actions (random fields, other seats, garbage JSON) are
refused with ``IllegalAction`` and change nothing.

Size: ``SMALLWORLD_PROPERTY_GAMES`` games in all (default 1500: 80 % for the main run, 10 % for each
of the two others) keeps CI time reasonable; raise it locally for a longer search.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import (
    Action,
    GameState,
    IllegalAction,
    apply,
    auto_pass,
    awaiting,
    final_standings,
    legal_actions,
    new_game,
)
from rules.actions import ACTION_FIELDS
from rules.bots import concrete, random_action
from rules.scoring import tokens_on_board
from rules.state import DEFEND, LOST_TRIBE, OVER, PICK, START, TurnState

from .invariants import check_invariants

GAMES = int(os.environ.get("SMALLWORLD_PROPERTY_GAMES", "1500"))
MAX_STEPS = 20_000


def _settings(examples: int) -> Callable:
    return settings(
        max_examples=max(1, examples),
        deadline=None,
        derandomize=True,  # the same games on every run: CI failures reproduce
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


@st.composite
def games(draw: st.DrawFn) -> dict[str, Any]:
    """The parameters of one random game."""
    players = draw(st.integers(2, 5))
    # Mostly the board printed for the player count; sometimes another one (new_game allows it).
    board = draw(st.sampled_from([None, None, None, "2-players", "3-players", "4-players", "5-players"]))
    return {
        "players": players,
        "map_name": board,
        "seed": draw(st.integers(0, 2**63 - 1) | st.text(max_size=12)),
        "redeploy": draw(st.sampled_from(["auto", "ask"])),
        "missed": draw(st.sampled_from([0.0, 0.0, 0.02, 0.1, 0.5])),  # chance a deadline is missed
        # rules.bots.random_action favours progress; now and then every legal action is equally
        # likely instead (more abandons, declines, redeploys, ended conquests).
        "uniform": draw(st.sampled_from([False, False, False, False, True])),
        "moves": draw(st.integers(0, 2**32 - 1)),
    }


def start(game: dict[str, Any]) -> GameState:
    return new_game(
        game["players"],
        seed=game["seed"],
        map_name=game["map_name"],
        options={"redeploy": game["redeploy"]},
    )


Step = tuple[str, Any]  # ("apply", action JSON) or ("auto_pass", seat)


def play(
    game: dict[str, Any], each_step: Callable[[GameState, random.Random], None] | None = None
) -> tuple[GameState, list[Step]]:
    """Play the game to its end, checking every step; return the final state and the action log."""
    rnd = random.Random(game["moves"])
    state = start(game)
    before = check_invariants(state)
    log: list[Step] = []
    for _ in range(MAX_STEPS):
        if state.over:
            return state, log
        if each_step is not None:
            each_step(state, rnd)
        seat = min(awaiting(state))
        if rnd.random() < game["missed"]:
            new = auto_pass(state, seat)
            log.append(("auto_pass", seat))
        else:
            if game["uniform"]:
                action = concrete(rnd.choice(legal_actions(state, seat)), rnd)
            else:
                action = random_action(state, seat, rnd)
            new = apply(state, action)
            log.append(("apply", action.to_json()))
        assert state.to_json() == before, f"step {len(log)} changed its input: {log[-1]}"
        after = check_invariants(new)
        check_progress(state, new)
        state, before = new, after
    raise AssertionError(f"no end after {MAX_STEPS} steps")


def check_progress(old: GameState, new: GameState) -> None:
    """What holds between two steps of a real game (a built state need not): the turn marker only
    moves forward, one seat at a time; a new turn starts clean; Lost Tribes never move."""
    n = len(new.players)
    for land, r in zip(new.board.regions, new.regions, strict=True):
        assert r.race != LOST_TRIBE or land.lost_tribe, "a Lost Tribe off its setup region"
    assert (new.turn, new.current) >= (old.turn, old.current) or new.phase == OVER
    if new.phase == OVER:
        assert old.turn == old.turns
        return
    if (new.turn, new.current) != (old.turn, old.current):
        assert new.current == (old.current + 1) % n
        assert new.turn == old.turn + (new.current == 0)
        assert new.phase == (PICK if new.players[new.current].active is None else START)
        assert new.t == TurnState() and new.defenders == []
        # Every attacked player redeployed (auto rule or their own step): no token waits in hand
        # next to a region of its race, except the Amazons' 4 held back (``held``).
        for seat, p in enumerate(new.players):
            for troop in p.troops():
                assert not (troop.hand and new.regions_of(seat, troop.race)), (seat, troop)
    if new.phase == DEFEND:
        assert new.defenders and new.current not in new.defenders
        assert awaiting(new) == {new.defenders[0]}


def replay(game: dict[str, Any], log: list[Step]) -> GameState:
    state = start(game)
    for kind, what in log:
        state = auto_pass(state, what) if kind == "auto_pass" else apply(state, what)
    return state


def check_standings(state: GameState) -> None:
    rows = final_standings(state)
    n = len(state.players)
    assert sorted(r["player"] for r in rows) == list(range(n))
    for row in rows:
        assert row["coins"] == state.players[row["player"]].coins >= 0
        assert row["tokens_on_board"] == tokens_on_board(state, row["player"])
    keys = [(-r["coins"], -r["tokens_on_board"]) for r in rows]
    assert keys == sorted(keys)
    assert rows[0]["place"] == 1
    for above, row in zip(rows, rows[1:], strict=False):
        tied = (above["coins"], above["tokens_on_board"]) == (row["coins"], row["tokens_on_board"])
        assert row["place"] == (above["place"] if tied else rows.index(row) + 1)
    for row in rows:
        shared = sum(r["coins"] == row["coins"] for r in rows) > 1
        assert row["tie_break"] == shared


@_settings(GAMES * 8 // 10)
@given(games())
def test_random_games_keep_the_invariants_replay_and_end_with_consistent_standings(game) -> None:
    final, log = play(game)
    assert final.turn == final.turns and awaiting(final) == set()
    turns_ended = sum(1 for kind, what in log if kind == "auto_pass" or (what["type"] in ("end_turn", "decline")))
    # Every seat played every turn (defenders' end_turn steps are counted too, hence >=).
    assert turns_ended >= final.turns * len(final.players)
    again = replay(game, log)
    assert again == final and again.to_json() == final.to_json()
    check_standings(final)


# -- every legal action applies --------------------------------------------------------------------
def apply_every_legal_action(state: GameState, rnd: random.Random) -> None:
    """Apply every offered action (described choices filled in at random); check the invariants and
    the JSON form on one of the results, chosen at random (all of them would triple the time)."""
    before = state.to_json()
    results = []
    for seat in range(len(state.players)):
        choices = legal_actions(state, seat)
        if seat not in awaiting(state):
            assert choices == [], (seat, choices)
        for choice in choices:
            action = concrete(choice, rnd)
            try:
                results.append((action, apply(state, action)))
            except IllegalAction as e:
                raise AssertionError(f"offered but refused: {action} ({e})") from e
    assert results, "the awaited player always has something to do"
    action, after = rnd.choice(results)
    check_invariants(after)
    assert apply(state, action.to_json()) == after  # the JSON form of an action applies the same
    assert state.to_json() == before


@_settings(GAMES // 10)
@given(games())
def test_every_action_legal_actions_offers_applies(game) -> None:
    play(game, apply_every_legal_action)


# -- illegal actions change nothing ----------------------------------------------------------------
def garbage_action(state: GameState, rnd: random.Random) -> Action:
    """An action of any type, for any seat, with random (often absurd) fields."""
    n, size = len(state.players), len(state.regions)
    kind = rnd.choice(sorted(ACTION_FIELDS) + ["fly", ""])
    fields: dict[str, Any] = {
        "region": rnd.randint(-2, size + 1),
        "combo": rnd.randint(-1, 7),
        "troop": rnd.choice(["active", "declined"]),
        "target": rnd.randint(-1, n),
        "decline": rnd.random() < 0.3,
        "regions": tuple(rnd.randint(-1, size) for _ in range(rnd.randint(0, 3))),
        "tokens": tuple(sorted({rnd.randint(-1, size): rnd.randint(0, 6) for _ in range(rnd.randint(0, 4))}.items())),
    }
    if rnd.random() < 0.1:  # a field left out or of the wrong kind
        fields[rnd.choice(["region", "combo", "target"])] = None
        fields["troop"] = rnd.choice(["active", "ghouls"])
    allowed = ACTION_FIELDS.get(kind, ())
    kept = {name: value for name, value in fields.items() if name in allowed}
    return Action(kind, rnd.randint(-1, n), **kept)


def garbage_json(rnd: random.Random) -> Any:
    junk = [None, True, 1.5, "x", -1, 10**9, [], {}, [1, 2], {"3": "a"}]
    choice = rnd.random()
    if choice < 0.2:
        return rnd.choice(junk)
    data: dict[str, Any] = {"type": rnd.choice(sorted(ACTION_FIELDS) + ["fly", None, 3])}
    for name in rnd.sample(["player", "region", "combo", "troop", "tokens", "regions", "target", "decline", "x"], 3):
        data[name] = rnd.choice(junk + [0, 1, 2])
    return data


def refuse_illegal_actions(state: GameState, rnd: random.Random) -> None:
    """Random actions, the awaited seat's legal actions played by other seats, garbage JSON and
    auto-passes of seats not awaited: each is refused with ``IllegalAction`` (or, for a random
    action that happens to be legal, is an ordinary step), and none changes the state."""
    before = state.to_json()
    waiting = awaiting(state)
    attempts: list[Any] = [garbage_action(state, rnd) for _ in range(6)]
    choices = legal_actions(state, min(waiting))
    for choice in rnd.sample(choices, min(3, len(choices))):
        for seat in range(len(state.players)):
            if seat not in waiting:
                attempts.append(dataclasses.replace(concrete(choice, rnd), player=seat))
    attempts += [garbage_json(rnd) for _ in range(3)]
    for attempt in attempts:
        try:
            after = apply(state, attempt)
        except IllegalAction as e:
            assert str(e), attempt
        else:
            # A random action may happen to be legal: then it is an ordinary step.
            assert after.last["player"] in waiting, attempt
            check_invariants(after)
    for seat in range(-1, len(state.players) + 1):
        if seat not in waiting:
            with contextlib.suppress(IllegalAction):
                auto_pass(state, seat)
                raise AssertionError(f"auto_pass accepted seat {seat}, not awaited")
    # One comparison for all the attempts: a change made by any of them would still show.
    assert state.to_json() == before, attempts


@_settings(GAMES // 10)
@given(games())
def test_illegal_actions_are_refused_and_change_nothing(game) -> None:
    play(game, refuse_illegal_actions)
