"""A turn told in one sentence (``rules.tell_turn``) for every race and every power of the box: each plays one
turn on the 2-player board against Bob (Orcs; Humans when Ann plays the Orcs), as a simple policy plays it (its
own kinds first, then conquests, Bob's regions first), and the sentence Bob reads is compared with
``golden/turns.txt`` (``SMALLWORLD_UPDATE_GOLDEN=1`` rewrites it: read the diff). Public facts only: no score
to Bob, no coins."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from rules import ACTION_KINDS, Action, GameState, apply, legal_actions, tell_turn
from rules.abilities import ACTION_OWNERS, POWERS, RACES
from rules.bots import concrete
from rules.components import RACE_TOKENS
from rules.telling import Step

from .builder import Builder

GOLDEN = Path(__file__).parent / "golden" / "turns.txt"
UPDATE = os.environ.get("SMALLWORLD_UPDATE_GOLDEN") == "1"
NAMES = ("Ann", "Bob")
#: A race and a power whose effects show nowhere in a turn's sentence, to pair with each ability.
PLAIN_RACE, PLAIN_POWER = "Humans", "Hill"


def board(race: str, power: str) -> GameState:
    """Ann's Active combo on the edge (a token on each of regions 9 and 10 of the 2-player board), Bob's troop
    beside it: 3 tokens on 4, a lone one on 3 (a Sorcerer's conversion), 2 on 2."""
    hand = min(9, RACE_TOKENS[race][1] - 2)  # within the box (components.md)
    b = Builder(2, seed=1).clear_board().active(0, race, power, hand=hand).region(9, seat=0, tokens=1)
    bob = ("Orcs" if race != "Orcs" else "Humans", "Swamp" if power != "Swamp" else "Forest")
    b = b.region(10, seat=0, tokens=1).active(1, *bob, hand=0)
    return b.region(4, seat=1, tokens=3).region(3, seat=1, tokens=1).region(2, seat=1, tokens=2).at(0, "start").build()


def choose(state: GameState, rnd: random.Random, used: set[str], conquests: int) -> Action:
    legal = legal_actions(state, 0)
    own = [a for a in legal if a.type in ACTION_OWNERS and a.type not in used]
    if own:
        kind = ACTION_KINDS[own[0].type]
        return concrete(own[0], rnd) if kind.choice else own[0]
    conquer = [a for a in legal if a.type == "conquer" and a.troop == "active"]
    if conquer and conquests < 3:
        return min(conquer, key=lambda a: (state.regions[a.region or 0].owner != 1, a.region))
    for kind in ("end_conquest",):
        found = [a for a in legal if a.type == kind]
        if found:
            return found[0]
    redeploy = [a for a in legal if a.type == "redeploy"]
    if redeploy and state.last.get("kind") != "redeploy":
        return concrete(redeploy[0], rnd)
    ending = [a for a in legal if a.type == "end_turn" and not a.decline]
    if ending:
        return ending[0]
    return concrete(legal[0], rnd) if ACTION_KINDS[legal[0].type].choice else legal[0]


def one_turn(race: str, power: str) -> str:
    state = board(race, power)
    rnd = random.Random(7)
    steps: list[Step] = []
    used: set[str] = set()
    conquests = 0
    while state.current == 0 and state.phase != "defend" and len(steps) < 40 and not state.over:
        action = choose(state, rnd, used, conquests)
        after = apply(state, action)
        steps.append(Step(state, after, action, NAMES, viewer=1))
        if action.type in ACTION_OWNERS:
            used.add(action.type)
        conquests += action.type == "conquer"
        state = after
    return tell_turn(steps)


ABILITIES = [(race, PLAIN_POWER) for race in sorted(RACES)] + [(PLAIN_RACE, power) for power in sorted(POWERS)]


def test_every_race_and_power_tells_its_turn_to_the_other_player() -> None:
    told = [f"{power} {race}: {one_turn(race, power)}" for race, power in ABILITIES]
    for line in told:
        assert "scored" not in line and "coins =" not in line, line  # Bob reads Ann's turn: no score
    text = "\n".join(told) + "\n"
    if UPDATE or not GOLDEN.exists():
        GOLDEN.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{GOLDEN} did not exist; written now: read it, then commit it")
    assert text == GOLDEN.read_text(encoding="utf-8")
