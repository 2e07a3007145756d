"""The column of combos (rulebook, "Picking a Race and Special Power Combo"; components.md)."""

from __future__ import annotations

import pytest

from rules import IllegalAction, legal_actions
from rules.state import CONQUER
from rules.troops import box_left

from .builder import Builder, act
from .invariants import check_invariants

COLUMN = (
    ("Ratmen", "Hill"),
    ("Orcs", "Flying"),
    ("Elves", "Swamp"),
    ("Trolls", "Merchant"),
    ("Dwarves", "Commando"),
    ("Wizards", "Forest"),
)


def column(state) -> list[tuple[str, str, int]]:
    return [(c.race, c.power, c.coins) for c in state.combos]


def game(coins: int = 5, *extra_coins: int):
    lying = extra_coins + (0,) * (6 - len(extra_coins))
    b = Builder(3, seed=1).combos(*((r, p, c) for (r, p), c in zip(COLUMN, lying, strict=True)))
    return b.coins(0, coins).stacks(races=["Humans"], powers=["Wealthy"]).build()


def test_the_top_combo_is_free() -> None:
    state = act(game(), "pick", 0, combo=0)
    assert state.players[0].coins == 5
    assert [c[2] for c in column(state)] == [0] * 6


@pytest.mark.parametrize("k", range(6))
def test_combo_k_costs_k_coins_one_dropped_on_each_combo_above(k: int) -> None:
    state = act(game(), "pick", 0, combo=k)
    assert state.players[0].coins == 5 - k
    coins = [c[2] for c in column(state)]
    # The k combos above got one coin each; those below slid up with no coins.
    assert coins == [1] * k + [0] * (6 - k)


def test_coins_lying_on_the_chosen_combo_are_taken() -> None:
    """Worked example: 3 coins lie on combo 2; picking it costs 2 and brings 3: 5 - 2 + 3 = 6."""
    state = act(game(5, 1, 0, 3), "pick", 0, combo=2)
    assert state.players[0].coins == 6
    assert [c[2] for c in column(state)] == [2, 1, 0, 0, 0, 0]


def test_the_column_slides_up_with_its_coins_and_the_top_of_the_stacks_is_revealed() -> None:
    state = act(game(5, 0, 0, 0, 4), "pick", 0, combo=1)
    assert column(state) == [
        ("Ratmen", "Hill", 1),
        ("Elves", "Swamp", 0),
        ("Trolls", "Merchant", 4),
        ("Dwarves", "Commando", 0),
        ("Wizards", "Forest", 0),
        ("Humans", "Wealthy", 0),
    ]
    assert "Humans" not in state.race_stack and "Wealthy" not in state.power_stack
    check_invariants(state)


def test_tokens_are_the_banner_plus_the_badge() -> None:
    state = act(game(), "pick", 0, combo=0)  # Ratmen 8 + Hill 4
    troop = state.players[0].active
    assert troop is not None
    assert (troop.race, troop.power, troop.hand, troop.declined) == ("Ratmen", "Hill", 12, False)
    assert troop.picked_turn == state.turn == 1
    assert state.phase == CONQUER
    state = act(game(), "pick", 0, combo=4)  # Dwarves 3 + Commando 4
    assert state.players[0].active.hand == 7  # type: ignore[union-attr]


def test_amazons_start_with_ten_plus_the_badge() -> None:
    state = Builder(2).combos(("Amazons", "Merchant")).build()
    state = act(state, "pick", 0, combo=0)
    assert state.players[0].active.hand == 12  # type: ignore[union-attr]


def test_tokens_are_capped_by_what_is_left_in_the_box() -> None:
    # Ratmen 8 + Mounted 5 = 13: the whole box.
    state = act(Builder(2).combos(("Ratmen", "Mounted")).build(), "pick", 0, combo=0)
    assert state.players[0].active.hand == 13 == 13 - box_left(state, "Ratmen")  # type: ignore[union-attr]
    # A box with 4 Ratmen away (a state only a house variant could reach): 9 left, 9 given.
    b = Builder(2).combos(("Ratmen", "Mounted"), ("Orcs", "Hill")).active(1, "Elves", "Swamp")
    state = b.region(3, seat=1, tokens=4, race="Ratmen").build(check=False)
    state = act(state, "pick", 0, combo=0)
    assert state.players[0].active.hand == 9  # type: ignore[union-attr]


def test_only_affordable_combos_are_offered() -> None:
    state = game(coins=2)
    picks = [a.combo for a in legal_actions(state, 0) if a.type == "pick"]
    assert picks == [0, 1, 2]
    with pytest.raises(IllegalAction, match=r"Combo 4 costs 4 coins .*you have 2"):
        act(state, "pick", 0, combo=4)


def test_a_combo_outside_the_column_is_refused() -> None:
    with pytest.raises(IllegalAction, match="There is no combo 6; choose 0 to 5"):
        act(game(), "pick", 0, combo=6)
    with pytest.raises(IllegalAction, match="There is no combo -1"):
        act(game(), "pick", 0, combo=-1)


def test_a_player_with_an_active_race_does_not_pick() -> None:
    state = Builder(2).active(0, "Ratmen", "Hill").region(1, seat=0, tokens=3).at(0).build()
    with pytest.raises(IllegalAction, match="already have an Active race"):
        act(state, "pick", 0, combo=0)
    assert not [a for a in legal_actions(state, 0) if a.type == "pick"]


def test_power_discards_are_reshuffled_when_the_stack_runs_out() -> None:
    """Rulebook, "Entering In Decline": "shuffle previously discarded Special Power badges"."""
    b = Builder(3, seed=5).combos(*COLUMN)
    s = b.state
    s.power_discard, s.power_stack = list(s.power_stack), []
    state = b.build()
    after = act(state, "pick", 0, combo=0)
    assert len(after.combos) == 6
    revealed = after.combos[-1]
    assert revealed.power in state.power_discard
    assert after.power_discard == []
    assert sorted(after.power_stack + [revealed.power]) == sorted(state.power_discard)
    assert after.rng != state.rng  # the shuffle used the game's generator
    assert act(state, "pick", 0, combo=0) == after  # ...deterministically
    check_invariants(after)


def five_players_holding_every_spare_banner(b: Builder) -> Builder:
    """Seats 1-4 hold an Active and an In Decline race: 8 banners + 6 in the column = all 14."""
    races = iter(["Humans", "Ghouls", "Giants", "Amazons", "Halflings", "Skeletons", "Sorcerers", "Tritons"])
    powers = iter(["Alchemist", "Berserk", "Stout", "Spirit", "Diplomat", "Heroic", "Mounted", "Pillaging"])
    for seat in range(1, 5):
        b.declined(seat, next(races), next(powers)).active(seat, next(races), next(powers))
    return b


def test_the_column_shrinks_when_no_banner_is_left() -> None:
    b = five_players_holding_every_spare_banner(Builder(5, seed=5).clear_board().combos(*COLUMN))
    state = b.build()
    assert state.race_stack == []
    after = act(state, "pick", 0, combo=0)
    assert [c.race for c in after.combos] == [r for r, _ in COLUMN[1:]]
    check_invariants(after)


def test_a_vanished_race_returns_under_the_banner_stack() -> None:
    """Rulebook, "Entering In Decline": the banner goes at the bottom of the stack."""
    b = Builder(2, seed=3).clear_board().combos(*COLUMN)
    b.declined(1, "Humans", "Alchemist").region(3, seat=1, declined=True)
    b.active(0, "Giants", "Berserk").region(4, seat=0, tokens=5).at(0, "conquer")
    state = b.build()
    after = act(state, "conquer", 0, region=3)
    assert after.race_stack[-1] == "Humans"
    assert after.players[1].declined == []
    assert column(after) == column(state)
    check_invariants(after)


def test_a_vanished_race_fills_the_lowest_empty_slot_of_a_short_column() -> None:
    """Rulebook: "...or in the lowest empty slot in the banner column, if any"."""
    b = five_players_holding_every_spare_banner(Builder(5, seed=3).clear_board().combos(*COLUMN[:5]))
    b.active(0, "Wizards", "Forest").region(18, seat=0, tokens=5)
    # Seat 1's In Decline Humans hold region 19, next to seat 0's Wizards.
    b.region(19, seat=1, declined=True).at(0, "conquer")
    state = b.build()
    assert state.race_stack == [] and len(state.combos) == 5
    after = act(state, "conquer", 0, region=19)
    assert [c.race for c in after.combos] == [r for r, _ in COLUMN[:5]] + ["Humans"]
    assert after.combos[5].power == state.power_stack[0]
    check_invariants(after)
