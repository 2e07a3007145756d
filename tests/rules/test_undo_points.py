"""Undo points (ARCHITECTURE §4): undo stops at the last step that revealed information or used chance.
``apply`` says so in ``last["undo_point"]``."""

from __future__ import annotations

from rules import auto_pass, new_game
from rules.state import REDEPLOY

from .builder import Builder, act
from .test_combos import COLUMN, five_players_holding_every_spare_banner


def conquering() -> Builder:
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=8)
    return b.region(1, seat=0, tokens=2).region(5).at(0, "conquer")


def test_setup_is_an_undo_point() -> None:
    assert new_game(2, seed=1).last == {"kind": "setup", "undo_point": True}


def test_a_pick_is_one_it_reveals_the_next_combo() -> None:
    after = act(Builder(2).build(), "pick", 0, combo=2)
    assert after.last == {"kind": "pick", "player": 0, "undo_point": True}


def test_plain_steps_are_not() -> None:
    state = conquering().build()
    for kind, fields in (
        ("conquer", {"region": 2}),
        ("abandon", {"region": 1}),
        ("end_conquest", {}),
    ):
        after = act(state, kind, 0, **fields)
        assert after.last == {"kind": kind, "player": 0, "undo_point": False}, kind
    after = act(act(state, "end_conquest", 0), "redeploy", 0, tokens=((1, 10),))
    assert after.last["undo_point"] is False


def test_a_die_roll_is_one() -> None:
    state = conquering().active(0, "Ratmen", "Merchant", hand=1).build()
    after = act(state, "final_conquest", 0, region=5)  # 4 needed, 1 in hand
    assert after.last["undo_point"] is True
    assert after.last["die"] in (0, 1, 2, 3)


def test_the_end_of_a_turn_is_one() -> None:
    state = act(conquering().at(0, REDEPLOY).build(), "redeploy", 0, tokens=((1, 10),))
    after = act(state, "end_turn", 0)
    assert after.last["kind"] == "end_turn" and after.last["undo_point"] is True


def test_going_in_decline_and_an_auto_pass_are_ones() -> None:
    state = conquering().at(0).build()
    assert act(state, "decline", 0).last["undo_point"] is True
    assert auto_pass(state, 0).last["undo_point"] is True


def test_a_conquest_that_reveals_a_combo_is_one() -> None:
    """A conquest that wipes out an In Decline race puts its banner in the empty slot of a short
    column: a new combo is revealed, so undo must stop there."""
    b = five_players_holding_every_spare_banner(Builder(5, seed=3).clear_board().combos(*COLUMN[:5]))
    b.active(0, "Wizards", "Forest").region(18, seat=0, tokens=5)
    state = b.region(19, seat=1, declined=True).at(0, "conquer").build()
    after = act(state, "conquer", 0, region=19)
    assert len(after.combos) == 6
    assert after.last["undo_point"] is True
    # With a full column the banner goes under the stack unseen: a plain step.
    plain = Builder(2, seed=3).clear_board().declined(1, "Humans", "Alchemist")
    plain.region(3, seat=1, declined=True).active(0, "Giants", "Berserk").region(4, seat=0, tokens=5)
    state = plain.at(0, "conquer").build()
    after = act(state, "conquer", 0, region=3)
    assert after.race_stack[-1] == "Humans"
    assert after.last["undo_point"] is False
