"""Ghouls: every token stays going In Decline, and In Decline they go on conquering before the
Active race (rulebook, "Ghouls"; rulings: before or after the pick, never after an Active conquest;
they may attack their owner's Active race; the Diplomat's peace does not bind them)."""

import pytest

from rules import IllegalAction, auto_pass, conquest_cost, legal_actions
from tests.rules.builder import Builder, act, region_of, set_slot_fields
from tests.rules.invariants import check_invariants
from tests.rules.playing import finish_turn

# On the 2-player board: region 3 borders 2, 4, 8, 9; region 4 borders 3, 9, 10.


def ghouls_in_decline(*, active: tuple[str, str] | None = ("Ratmen", "Hill"), phase: str = "start"):
    b = Builder(2).clear_board().declined(0, "Ghouls", "Commando")
    b.region(3, seat=0, tokens=3, declined=True).region(4, seat=0, tokens=2, declined=True)
    if active is not None:
        b.active(0, *active, hand=0).region(16, seat=0, tokens=4)
    b.active(1, "Humans", "Swamp", hand=0).region(9, seat=1).region(13, seat=1, tokens=2)
    b.combos(("Orcs", "Alchemist"), ("Elves", "Forest"))
    return b.at(0, phase).build()


def ghoul_conquests(state, seat=0):
    return {a.region for a in legal_actions(state, seat) if a.type == "conquer" and a.troop == "declined"}


def test_ghouls_keep_every_token_when_going_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ghouls", "Hill", hand=0)
        .region(3, seat=0, tokens=3)
        .region(4, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert (region_of(state, 3)["tokens"], region_of(state, 4)["tokens"]) == (3, 2)
    assert state.players[0].declined[0].race == "Ghouls"


def test_other_races_keep_one_token_per_region_going_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=0)
        .region(3, seat=0, tokens=3)
        .region(4, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert (region_of(state, 3)["tokens"], region_of(state, 4)["tokens"]) == (1, 1)


def test_in_decline_ghouls_conquer_before_the_pick():
    state = ghouls_in_decline(active=None, phase="pick")
    assert 9 in ghoul_conquests(state)
    state = act(state, "conquer", 0, region=9, troop="declined")  # 2 + 1 Human; the hand is 2 + 1
    assert region_of(state, 9) == {"owner": 0, "race": "Ghouls", "tokens": 3}
    assert state.phase == "pick"
    state = act(state, "pick", 0, combo=0)
    assert state.players[0].active.race == "Orcs"


def test_in_decline_ghouls_may_still_conquer_after_the_pick():
    state = ghouls_in_decline(active=None, phase="pick")
    state = act(state, "pick", 0, combo=0)
    assert 9 in ghoul_conquests(state)
    state = act(state, "conquer", 0, region=9, troop="declined")
    assert region_of(state, 9)["race"] == "Ghouls"


def test_in_decline_ghouls_conquer_before_the_active_race_readies():
    state = ghouls_in_decline()
    state = act(state, "conquer", 0, region=9, troop="declined")
    assert state.phase == "conquer"
    state = act(state, "conquer", 0, region=17)  # then the Active Ratmen
    assert region_of(state, 17)["race"] == "Ratmen"


def test_in_decline_ghouls_cannot_conquer_after_an_active_conquest():
    state = ghouls_in_decline()
    state = act(state, "conquer", 0, region=17)
    assert ghoul_conquests(state) == set()
    with pytest.raises(IllegalAction, match="before your Active race"):
        act(state, "conquer", 0, region=9, troop="declined")


def test_in_decline_ghouls_may_attack_their_owners_active_race():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls")
        .region(3, seat=0, tokens=5, declined=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(9, seat=0, tokens=2)
        .region(16, seat=0)
        .at(0, "start")
        .build()
    )
    assert 9 in ghoul_conquests(state)
    state = act(state, "conquer", 0, region=9, troop="declined")  # 2 + 2 Ratmen, with 4 in hand
    assert region_of(state, 9)["race"] == "Ghouls"
    assert state.players[0].active.hand == 1  # one Ratman discarded, one in hand
    assert 0 not in state.t.attacked
    check_invariants(state)


def test_the_diplomats_peace_does_not_bind_in_decline_ghouls():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls")
        .region(3, seat=0, tokens=4, declined=True)
        .active(0, "Ratmen", "Hill", hand=6)
        .region(2, seat=0)
        .active(1, "Humans", "Diplomat", hand=0)
        .region(9, seat=1)
        .region(8, seat=1)
        .at(0, "start")
        .build()
    )
    set_slot_fields(state, "Diplomat", diplomat=1, ally=0)  # seat 1 made peace with seat 0 at the end of their turn
    assert 9 in ghoul_conquests(state)
    assert 8 not in {a.region for a in legal_actions(state, 0) if a.troop == "active" and a.region is not None}
    state = act(state, "conquer", 0, region=9, troop="declined")
    assert region_of(state, 9)["race"] == "Ghouls"
    with pytest.raises(IllegalAction, match="at peace"):
        act(state, "conquer", 0, region=8)


def test_in_decline_ghouls_have_no_special_power_any_more():
    state = ghouls_in_decline()
    ghouls = state.players[0].declined[0]
    assert ghouls.power == "Commando"
    assert conquest_cost(state, 0, ghouls, 9) == 3  # no Commando discount In Decline


def test_other_in_decline_races_do_not_conquer():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen")
        .region(3, seat=0, declined=True)
        .active(0, "Humans", "Hill", hand=0)
        .region(16, seat=0, tokens=3)
        .at(0, "start")
        .build()
    )
    assert all(a.troop == "active" for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="Only In Decline Ghouls"):
        act(state, "conquer", 0, region=4, troop="declined")


def test_conquering_ghouls_redeploy_at_the_end_of_the_turn():
    state = act(ghouls_in_decline(), "conquer", 0, region=9, troop="declined")
    state = act(state, "end_conquest", 0)
    kinds = {a.troop for a in legal_actions(state, 0) if a.type == "redeploy"}
    assert kinds == {"active", "declined"}
    state = finish_turn(state, 0)
    assert state.players[0].declined[0].hand == 0
    assert sum(state.regions[i].tokens for i in state.regions_of(0, "Ghouls")) == 5
    check_invariants(state)


def test_auto_pass_places_the_ghouls_hand_by_the_auto_rule():
    state = act(ghouls_in_decline(), "conquer", 0, region=10, troop="declined")  # empty: 2 of the 3 in hand
    state = auto_pass(state, 0)
    assert state.players[0].declined[0].hand == 0
    # The one left in hand goes to the region with the fewest tokens, ties to the lowest number.
    assert [region_of(state, i)["tokens"] for i in (3, 4, 10)] == [2, 1, 2]


def test_a_ghoul_final_conquest_ends_the_ghouls_conquests_only():
    state = (
        Builder(2, seed=3)
        .clear_board()
        .declined(0, "Ghouls")
        .region(3, seat=0, tokens=2, declined=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(16, seat=0, tokens=4)
        .active(1, "Humans", "Swamp", hand=0)
        .region(9, seat=1, tokens=2)
        .at(0, "start")
        .build()
    )
    assert any(a.type == "final_conquest" and a.troop == "declined" for a in legal_actions(state, 0))
    state = act(state, "final_conquest", 0, region=9, troop="declined")
    assert state.phase == "conquer" and ghoul_conquests(state) == set()
    assert any(a.type == "conquer" and a.troop == "active" for a in legal_actions(state, 0))


def test_in_decline_ghouls_may_still_conquer_after_the_active_race_abandons_a_region():
    """Abandoning is part of readying the troops, not a conquest of the Active race (rulings)."""
    state = act(ghouls_in_decline(), "abandon", 0, region=16)
    assert 9 in ghoul_conquests(state)
    state = act(state, "conquer", 0, region=9, troop="declined")
    assert region_of(state, 9)["race"] == "Ghouls"


def test_a_player_auto_passed_after_the_ghouls_conquered_places_them_and_picks_nothing():
    state = act(ghouls_in_decline(active=None, phase="pick"), "conquer", 0, region=10, troop="declined")
    state = auto_pass(state, 0)
    assert state.players[0].active is None and state.players[0].declined[0].hand == 0
    assert [region_of(state, i)["tokens"] for i in (3, 4, 10)] == [2, 1, 2]
    assert state.last["score"]["regions"] == 3
    check_invariants(state)
