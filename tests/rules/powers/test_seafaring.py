"""Seafaring: only a Seafaring race conquers the Seas and the Lake, as empty regions, while Active;
it keeps and scores them In Decline; a first conquest may be on a Sea on the edge of the board
(rulebook, "Seafaring"; rulings). 2-player board: Seas 0 (borders 1, 5) and 22 (15, 20, 21), on the
edge; the Lake 7 (2, 6, 8, 12, 13) is inland."""

import pytest

from rules import IllegalAction, conquest_cost, legal_actions, turn_score
from tests.rules.builder import Builder, act, region_of
from tests.rules.invariants import check_invariants


def seafaring(race="Ratmen", hand=6, phase="conquer"):
    return (
        Builder(2)
        .clear_board()
        .active(0, race, "Seafaring", hand=hand)
        .region(1, seat=0)
        .region(2, seat=0)
        .at(0, phase)
        .build()
    )


def test_seafaring_conquers_a_sea_as_an_empty_region():
    state = seafaring()
    assert {0, 7} <= {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert conquest_cost(state, 0, state.players[0].active, 0) == 2
    state = act(state, "conquer", 0, region=0)
    assert region_of(state, 0) == {"owner": 0, "race": "Ratmen", "tokens": 2}
    check_invariants(state)


def test_seafaring_conquers_the_lake():
    state = act(seafaring(), "conquer", 0, region=7)
    assert region_of(state, 7)["race"] == "Ratmen"


def test_a_sea_leads_on_to_its_shores():
    state = (
        Builder(2).clear_board().active(0, "Ratmen", "Seafaring", hand=6).region(22, seat=0).at(0, "conquer").build()
    )
    assert {15, 20, 21} <= {a.region for a in legal_actions(state, 0) if a.type == "conquer"}


def test_other_races_never_take_water():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=6)
        .region(1, seat=0)
        .region(2, seat=0)
        .at(0, "conquer")
        .build()
    )
    assert not {0, 7} & {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    with pytest.raises(IllegalAction, match="only a Seafaring race may conquer Seas and the Lake"):
        act(state, "conquer", 0, region=0)


def test_other_races_cannot_attack_a_seafaring_race_on_a_sea():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Hill", hand=6)
        .region(1, seat=0)
        .active(1, "Humans", "Seafaring", hand=0)
        .region(0, seat=1)
        .region(5, seat=1)
        .at(0, "conquer")
        .build()
    )
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "conquer", 0, region=0)


def test_the_first_conquest_may_be_a_sea_on_the_edge_of_the_board():
    state = Builder(2).combos(("Ratmen", "Seafaring"), ("Humans", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    assert {0, 22} <= {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert region_of(act(state, "conquer", 0, region=22), 22)["race"] == "Ratmen"


def test_the_lake_is_not_a_first_conquest():
    state = Builder(2).combos(("Ratmen", "Seafaring"), ("Humans", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    with pytest.raises(IllegalAction, match="first conquest must be on a border region"):
        act(state, "conquer", 0, region=7)


def test_seas_are_kept_and_scored_in_decline():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Seafaring", hand=0)
        .region(0, seat=0, tokens=2)
        .region(7, seat=0)
        .region(1, seat=0)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert [region_of(state, i)["race"] for i in (0, 7, 1)] == ["Ratmen"] * 3
    assert state.last["score"]["regions"] == 3
    assert turn_score(state, 0)["regions"] == 3
    check_invariants(state)


def test_in_decline_seafaring_ghouls_take_no_more_water():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ghouls", "Seafaring")
        .region(1, seat=0, tokens=4, declined=True)
        .at(0, "pick")
        .build()
    )
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert 0 not in offered and 2 in offered
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "conquer", 0, region=0, troop="declined")


def test_conquering_an_empty_sea_is_no_non_empty_conquest():
    state = act(seafaring(race="Orcs", hand=5), "conquer", 0, region=0)
    assert turn_score(state, 0)["bonus"] == {}
