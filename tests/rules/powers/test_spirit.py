"""Spirit: a Spirit race In Decline never counts toward the one-race-In-Decline limit; it leaves the
map only through losses (rulebook, "Spirit"; rulings)."""

from rules import turn_score
from tests.rules.builder import Builder, act
from tests.rules.invariants import check_invariants


def test_a_spirit_race_going_in_decline_leaves_the_earlier_one_in_place():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Orcs", "Hill")
        .region(10, seat=0, declined=True)
        .active(0, "Ratmen", "Spirit", hand=0)
        .region(3, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert sorted(t.race for t in state.players[0].declined) == ["Orcs", "Ratmen"]
    assert state.last["score"]["regions"] == 2
    check_invariants(state)


def test_a_later_decline_removes_the_other_race_but_never_the_spirits():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Spirit")
        .region(3, seat=0, declined=True)
        .declined(0, "Orcs", "Hill")
        .region(10, seat=0, declined=True)
        .active(0, "Humans", "Swamp", hand=0)
        .region(16, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert sorted(t.race for t in state.players[0].declined) == ["Humans", "Ratmen"]
    assert state.regions[10].race is None and state.regions[3].race == "Ratmen"
    check_invariants(state)


def test_both_in_decline_races_score():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Spirit")
        .region(3, seat=0, declined=True)
        .declined(0, "Orcs", "Hill")
        .region(10, seat=0, declined=True)
        .active(0, "Humans", "Swamp", hand=0)
        .region(16, seat=0)
        .at(0, "redeploy")
        .build()
    )
    assert turn_score(state, 0)["regions"] == 3


def test_the_spirit_badge_stays_with_its_race_until_the_race_is_wiped_out():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Spirit", hand=0)
        .region(3, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert "Spirit" not in state.power_discard
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", "Spirit")
        .region(3, seat=0, declined=True)
        .active(1, "Orcs", "Hill", hand=6)
        .region(2, seat=1)
        .at(1, "conquer")
        .build()
    )
    state = act(state, "conquer", 1, region=3)
    assert state.players[0].declined == [] and "Spirit" in state.power_discard
    check_invariants(state)


def test_a_non_spirit_race_still_respects_the_limit():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Orcs", "Hill")
        .region(10, seat=0, declined=True)
        .active(0, "Ratmen", "Swamp", hand=0)
        .region(3, seat=0, tokens=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "decline", 0)
    assert [t.race for t in state.players[0].declined] == ["Ratmen"]
