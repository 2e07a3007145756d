"""``rules.bots``: the one-step greedy bot and the house bot play whole games with legal moves only, the same
moves from the same seed, read nothing a player may not see, and use the races' and powers' own actions.

The house bot's strength is measured in ``bench/house_bot.py`` (win rates against the random and the greedy
bot), not here: a test asserts what must always hold.
"""

from __future__ import annotations

import random

import pytest

from rules import ACTION_KINDS, apply, awaiting, legal_actions, new_game
from rules.abilities import ACTION_OWNERS, POWERS, RACES
from rules.actions import BASE_KINDS
from rules.bots import Budget, candidates, determinize, greedy_action, house_action, sample_action
from rules.state import GameState

from .builder import Builder
from .test_bots import offered

#: A small budget: the tests are about what the bot may do, not how well.
SMALL = Budget(worlds=1, breadth=3, deep_worlds=1, shortlist=2)


def house(state: GameState, seat: int, rnd: random.Random) -> object:
    return house_action(state, seat, rnd, SMALL)


def play(state: GameState, bots: list, seed: int, max_steps: int = 3000) -> list:
    rnds = [random.Random(f"{seed}:{seat}") for seat in range(len(state.players))]
    moves = []
    for _ in range(max_steps):
        if state.over:
            return moves
        seat = min(awaiting(state))
        action = bots[seat](state, seat, rnds[seat])
        assert offered(action, legal_actions(state, seat)), (action, legal_actions(state, seat))
        state = apply(state, action)
        moves.append(action)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("redeploy", ["auto", "ask"])
def test_greedy_and_house_bots_play_a_whole_game_with_legal_moves(redeploy: str) -> None:
    state = new_game(3, seed=f"whole-{redeploy}", options={"redeploy": redeploy})
    moves = play(state, [house, greedy_action, sample_action], seed=7)
    assert {m.player for m in moves} == {0, 1, 2}
    if redeploy == "ask":  # the house bot redeploys as a defender too
        assert any(m.player == 0 and m.type == "redeploy" and m.tokens for m in moves)


def test_the_same_seed_gives_the_same_moves() -> None:
    state = new_game(3, seed="again")
    first = play(state, [house, greedy_action, house], seed=3)
    assert play(state, [house, greedy_action, house], seed=3) == first


def test_a_bot_reads_nothing_its_seat_may_not_see() -> None:
    """ARCHITECTURE §4: the stacks under the column, the random generator and the others' coins are secret;
    changing them changes none of the bots' moves."""
    state = new_game(3, seed="secrets")
    state = apply(state, {"type": "pick", "player": 0, "combo": 1})
    hidden = state.fork()
    hidden.race_stack = list(reversed(state.race_stack))
    hidden.power_stack = list(reversed(state.power_stack))
    hidden.rng = state.rng ^ 0x5DEECE66D
    hidden.edit_player(1).coins = 40
    hidden.edit_player(2).coins = 0
    hidden = hidden.done()
    for bot in (greedy_action, house):
        assert bot(state, 0, random.Random(5)) == bot(hidden, 0, random.Random(5))


def test_determinize_keeps_what_the_seat_sees() -> None:
    state = new_game(3, seed="world")
    world = determinize(state, 0, random.Random(1))
    assert world.regions == state.regions and world.combos == state.combos
    assert sorted(world.race_stack) == sorted(state.race_stack)
    assert sorted(world.power_stack) == sorted(state.power_stack)
    assert world.players[0] == state.players[0]
    assert [p.coins for p in world.players] == [state.players[0].coins] * 3
    assert state.rng != world.rng


def test_described_choices_are_filled_in_as_legal_actions() -> None:
    state = new_game(3, seed="fill")
    for _ in range(60):
        if state.over:
            break
        seat = min(awaiting(state))
        for action in candidates(state, seat):
            assert offered(action, legal_actions(state, seat))
            assert action.count is None  # filled in: no longer a description
            apply(state, action)
        state = apply(state, sample_action(state, seat, random.Random(seat)))


ABILITY_KINDS = sorted(kind.type for kind in ACTION_KINDS.values() if kind not in BASE_KINDS)


@pytest.mark.parametrize("kind", ABILITY_KINDS)
def test_the_house_bot_uses_every_race_and_power_action(kind: str) -> None:
    """Given the combo whose race or power owns ``kind``, the house bot takes that action within its
    first turns (it is offered by ``legal_actions`` like any other; the bot knows no ability by name)."""
    owner = ACTION_OWNERS[kind]
    race, power = (owner.name, "Hill") if owner.name in RACES else ("Humans", owner.name)
    assert power in POWERS
    # A kind for a defender (``ActionKind.defends``) needs the ``ask`` mode and an attack on the bot.
    defends = ACTION_KINDS[kind].defends
    used = False
    for seed in range(8 if defends else 4):
        redeploy = "ask" if defends else "auto"
        state = Builder(3, seed=f"uses-{kind}-{seed}", redeploy=redeploy).combos((race, power)).at(0).build()
        rnds = [random.Random(f"{seed}:{s}") for s in range(3)]
        for _ in range(600):
            if state.over or state.turn > (7 if defends else 4):
                break
            seat = min(awaiting(state))
            action = house(state, seat, rnds[seat]) if seat == 0 else sample_action(state, seat, rnds[seat])
            used |= seat == 0 and action.type == kind
            state = apply(state, action)
        if used:
            break
    assert used, f"the house bot never used {kind} ({owner.name})"
