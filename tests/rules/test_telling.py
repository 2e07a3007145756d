"""Steps told in words (``rules/telling.py``): the base game's steps here, a race's or power's own kinds by
its ``tell``, what an ability added by its ``note``; public facts only (ARCHITECTURE §4: never a player's coins,
a turn's score to its player alone until the game is over)."""

from __future__ import annotations

import random

import pytest

from rules import ACTION_KINDS, Action, apply, auto_pass, awaiting, new_game, tell
from rules.bots import random_player
from rules.telling import TELLERS

from .builder import Builder, act

NAMES = ("Ann", "Bob", "Cy")


def told(before, action: Action, viewer: int | None = None) -> str:
    return tell(before, apply(before, action), action, NAMES, viewer)


def test_a_conquest_names_the_region_the_loser_and_the_losses() -> None:
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Hill", hand=12).region(9, seat=0)
    state = b.active(1, "Humans", "Swamp", hand=0).region(10, seat=1, tokens=3).region(4).at(0, "conquer").build()
    assert told(state, Action("conquer", 0, region=10)) == (
        "Ann conquered Forest 10 from Bob's Humans (3 tokens: 1 lost, 2 back in hand) with 5 tokens"
    )
    assert told(state, Action("conquer", 0, region=4)) == "Ann conquered Hill 4 from a Lost Tribe with 3 tokens"
    assert told(state, Action("conquer", 0, region=3)) == "Ann conquered Swamp 3 with 2 tokens"


def test_a_pick_tells_the_combo_and_the_coins_lying_on_the_column() -> None:
    state = Builder(3, seed=9).combos(("Ratmen", "Hill", 2), ("Orcs", "Swamp", 3), ("Elves", "Forest")).build()
    assert told(state, Action("pick", 0, combo=1)) == (
        "Ann picked combo 2: the Swamp Orcs, leaving 1 coin on the combos above and taking the 3 coins lying"
        " on it; 9 tokens in hand"
    )


def test_a_turns_score_is_told_to_its_player_only_until_the_end() -> None:
    state = act(Builder(3, seed=9).at(0).build(), "pick", 0, combo=0)
    state = act(state, "end_conquest", 0)
    after = apply(state, Action("end_turn", 0))
    assert "scoring" not in tell(state, after, Action("end_turn", 0), NAMES, viewer=1)
    assert "scoring" not in tell(state, after, Action("end_turn", 0), NAMES, viewer=None)
    mine = tell(state, after, Action("end_turn", 0), NAMES, viewer=0)
    assert mine.startswith("Ann ended the turn, scoring ") and mine.endswith("coins")
    assert "scoring" in tell(state, after, Action("end_turn", 0), NAMES, reveal=True)


def test_an_auto_pass_is_told() -> None:
    state = Builder(2, seed=1).build()
    assert tell(state, auto_pass(state, 0), None, NAMES) == "Ann's turn was completed automatically"


def test_what_an_ability_added_to_a_step_is_noted() -> None:
    state = Builder(2, seed=1).clear_board().active(0, "Trolls", "Hill", hand=8).region(9, seat=0)
    state = state.at(0, "conquer").build()
    assert (
        told(state, Action("conquer", 0, region=10))
        == "Ann conquered Forest 10 with 2 tokens (a Troll's Lair built there)"
    )


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (
            Action("dragon", 0, region=10),
            "Ann sent the Dragon to Forest 10 with one token from Bob's Humans (1 token: lost)",
        ),
    ],
)
def test_an_abilitys_own_step_is_told_by_the_ability(action: Action, expected: str) -> None:
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Dragon Master", hand=5).region(9, seat=0)
    state = b.active(1, "Humans", "Swamp", hand=0).region(10, seat=1).at(0, "conquer").build()
    assert told(state, action) == expected


def test_every_step_of_random_games_is_told_without_anyones_coins() -> None:
    """Every action type is told by its own words (none falls back to the bare type), and a seat's coin
    count, made unique, never appears in what another seat reads."""
    seen: set[str] = set()
    for seed in range(6):
        rnd = random.Random(seed)
        state = new_game(3, seed=seed)
        marks = (90001, 90002, 90003)
        while not state.over:
            for seat, mark in enumerate(marks):
                state.players[seat].coins = mark
            seat = min(awaiting(state))
            if rnd.random() < 0.03:
                action, after = None, auto_pass(state, seat)
            else:
                action = random_player(state, rnd)
                after = apply(state, action)
            kind = after.last["kind"]
            seen.add(kind)
            for viewer in (0, 1, 2, None):
                text = tell(state, after, action, NAMES, viewer)
                assert text.startswith(NAMES[seat]), text
                assert f": {kind.replace('_', ' ')}" not in text, text  # not the bare fallback
                assert not any(str(mark) in text for mark in marks)
            state = after
    assert set(TELLERS) <= seen  # every base step, auto-passes included
    assert len(seen - set(TELLERS)) >= 3  # and some races' and powers' own kinds
    assert all(kind in ACTION_KINDS or kind == "auto_pass" for kind in seen)


def test_every_turn_of_random_games_is_told_in_one_sentence_without_anyones_coins_or_score() -> None:
    """``tell_turn`` over whole random games: one sentence per run of a seat's steps, each step told in its
    short form (none falls back to the bare action type), never another seat's coins nor its score."""
    from itertools import groupby

    from rules import tell_turn
    from rules.telling import Step, predicate

    for seed in range(4):
        rnd = random.Random(seed)
        state = new_game(3, seed=seed)
        marks = (90001, 90002, 90003)
        steps: list[Step] = []
        while not state.over:
            for seat, mark in enumerate(marks):
                state.players[seat].coins = mark
            seat = min(awaiting(state))
            if rnd.random() < 0.03:
                action, after = None, auto_pass(state, seat)
            else:
                action = random_player(state, rnd)
                after = apply(state, action)
            steps.append(Step(state, after, action, NAMES))
            state = after
        runs = [list(run) for _, run in groupby(steps[:-1], key=lambda s: (s.player, s.before.turn))]
        for run in runs:
            for viewer in (0, 1, 2):
                text = tell_turn([Step(s.before, s.after, s.action, NAMES, viewer) for s in run])
                assert text.startswith(NAMES[run[0].player]) and text.endswith("."), text
                assert not any(str(mark) in text for mark in marks), text
                for s in run:  # each step in its own words, not the bare fallback
                    told = predicate(Step(s.before, s.after, s.action, NAMES, viewer, brief=True))
                    assert str(told) != s.kind.replace("_", " "), (s.kind, text)
                assert ", then redeployed, then" not in text and "redeployed, then redeployed" not in text, text
                if run[0].player != viewer:
                    assert "scored" not in text, text
