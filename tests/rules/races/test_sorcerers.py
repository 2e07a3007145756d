"""Sorcerers: once per turn per opponent, replace a lone Active enemy token in a region next to
theirs with a Sorcerer from the box (rulebook, "Sorcerers"; rulings: a Lair, a Fortress or a
Mountain does not protect the token, an Encampment does; no Sorcerer in hand is needed, one in the
box is; a converted Elf is lost; Dragon, Heroes and Holes make a region immune to it)."""

import pytest

from rules import IllegalAction, legal_actions, turn_score
from rules.troops import box_left
from tests.rules.builder import Builder, act, region_of, set_slot_fields
from tests.rules.invariants import check_invariants

# 2-player board: region 3 borders 2, 4, 8, 9; region 10 does not border 3; 8 is a Mountain.


def sorcerers(power="Hill", hand=0, phase="start", victim=("Humans", "Swamp"), **victim_regions):
    b = Builder(2).clear_board().active(0, "Sorcerers", power, hand=hand).region(3, seat=0)
    b.active(1, *victim, hand=0)
    for name, spec in (victim_regions or {"r4": 1, "r10": 1}).items():
        markers = dict(spec) if isinstance(spec, dict) else {"tokens": spec}
        b.region(int(name[1:]), seat=1, **markers)
    return b.at(0, phase).build()


def converts(state, seat=0):
    return {a.region for a in legal_actions(state, seat) if a.type == "convert"}


def test_sorcerers_replace_a_lone_active_token_next_to_them():
    state = sorcerers()
    assert converts(state) == {4}
    state = act(state, "convert", 0, region=4)
    assert region_of(state, 4) == {"owner": 0, "race": "Sorcerers", "tokens": 1}
    assert state.players[1].active.hand == 0  # the Human went back to the box
    assert box_left(state, "Humans") == 10 - 1
    check_invariants(state)


def test_the_new_sorcerer_comes_from_the_box_with_none_in_hand():
    state = sorcerers(hand=0)
    state = act(state, "convert", 0, region=4)
    assert state.players[0].active.hand == 0
    assert box_left(state, "Sorcerers") == 18 - 2


def test_only_once_per_turn_per_opponent():
    state = sorcerers(r4=1, r9=1)
    assert converts(state) == {4, 9}
    state = act(state, "convert", 0, region=4)
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="once per turn per opponent"):
        act(state, "convert", 0, region=9)


def test_each_opponent_may_be_converted_once_in_the_same_turn():
    # 3-player board: region 9 borders 3 and 8.
    state = (
        Builder(3)
        .clear_board()
        .active(0, "Sorcerers", "Hill", hand=0)
        .region(9, seat=0)
        .active(1, "Humans", "Swamp", hand=0)
        .region(3, seat=1)
        .active(2, "Orcs", "Forest", hand=0)
        .region(8, seat=2)
        .at(0, "start")
        .build()
    )
    state = act(state, "convert", 0, region=3)
    state = act(state, "convert", 0, region=8)
    assert {region_of(state, i)["race"] for i in (3, 8)} == {"Sorcerers"}


def test_the_conversion_works_again_next_turn():
    state = sorcerers(r4=1, r9=1)
    state = act(state, "convert", 0, region=4)
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((3, 1), (4, 1)))
    state = act(state, "end_turn", 0)
    state = act(state, "end_conquest", 1)
    state = act(state, "end_turn", 1)
    assert converts(state) == {9}


def test_a_token_that_is_not_alone_is_not_converted():
    state = sorcerers(r4=2)
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="alone in its region; region 4 holds 2"):
        act(state, "convert", 0, region=4)


@pytest.mark.parametrize(
    "victim, marker",
    [(("Trolls", "Swamp"), "lair"), (("Humans", "Fortified"), "fortress")],
)
def test_a_lair_or_a_fortress_does_not_protect_a_lone_token(victim, marker):
    state = sorcerers(victim=victim, r4={"tokens": 1, marker: True})
    assert converts(state) == {4}
    state = act(state, "convert", 0, region=4)
    assert region_of(state, 4) == {
        "owner": 0,
        "race": "Sorcerers",
        "tokens": 1,
    }  # the marker went too


def test_a_mountain_does_not_protect_a_lone_token():
    state = sorcerers(r8=1)
    state = act(state, "convert", 0, region=8)
    assert region_of(state, 8) == {"owner": 0, "race": "Sorcerers", "tokens": 1, "mountain": True}


def test_an_encampment_protects_a_lone_token():
    state = sorcerers(victim=("Humans", "Bivouacking"), r4={"tokens": 1, "encampments": 1})
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="Encampment protects"):
        act(state, "convert", 0, region=4)


def test_in_decline_tokens_are_not_converted():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Hill", hand=0)
        .region(3, seat=0)
        .declined(1, "Humans", "Swamp")
        .region(4, seat=1, declined=True)
        .at(0, "start")
        .build()
    )
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="only Active tokens"):
        act(state, "convert", 0, region=4)


def test_lost_tribes_are_not_converted():
    state = sorcerers()
    state.regions[9].race, state.regions[9].tokens = "Lost Tribe", 1
    with pytest.raises(IllegalAction, match="no opponent's token"):
        act(state, "convert", 0, region=9)


def test_the_region_must_border_a_sorcerer_region():
    state = sorcerers()
    with pytest.raises(IllegalAction, match="not adjacent to one of your Sorcerer regions"):
        act(state, "convert", 0, region=10)


@pytest.mark.parametrize(
    "victim, marker",
    [
        (("Humans", "Heroic"), "hero"),
        (("Humans", "Dragon Master"), "dragon"),
        (("Halflings", "Swamp"), "hole"),
    ],
)
def test_an_immune_region_is_not_converted(victim, marker):
    state = sorcerers(victim=victim, r4={"tokens": 1, marker: True})
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="immune"):
        act(state, "convert", 0, region=4)


def test_no_conversion_when_the_box_has_no_sorcerer_left():
    b = Builder(2).clear_board().active(0, "Sorcerers", "Hill", hand=0)
    for region in (1, 2, 3, 5, 6, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21):
        b.region(region, seat=0)
    state = b.active(1, "Humans", "Swamp", hand=0).region(4, seat=1).at(0, "start").build()
    assert box_left(state, "Sorcerers") == 0
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="No Sorcerer token is left in the box"):
        act(state, "convert", 0, region=4)


def test_no_conversion_of_a_diplomats_active_race_at_peace_with_the_sorcerers():
    state = sorcerers(victim=("Humans", "Diplomat"))
    set_slot_fields(state, "Diplomat", diplomat=1, ally=0)  # player 1 at peace with player 0
    with pytest.raises(IllegalAction, match="at peace"):
        act(state, "convert", 0, region=4)


def test_a_conversion_is_an_attack_the_diplomat_cannot_ally_with():
    state = act(sorcerers(power="Diplomat"), "convert", 0, region=4)
    state = act(state, "end_conquest", 0)
    assert not any(a.type == "choose_ally" and a.target == 1 for a in legal_actions(state, 0))
    with pytest.raises(IllegalAction, match="attacked player 1"):
        act(state, "choose_ally", 0, target=1)


def test_a_conversion_is_a_conquest_of_a_non_empty_region():
    state = act(sorcerers(power="Pillaging"), "convert", 0, region=4)
    assert turn_score(state, 0)["bonus"] == {"Pillaging": 1}
    assert not any(a.type == "abandon" for a in legal_actions(state, 0))


def test_no_conversion_once_the_conquests_are_over():
    state = act(sorcerers(), "end_conquest", 0)
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="during your conquests"):
        act(state, "convert", 0, region=4)


def test_no_conversion_of_a_seafaring_token_on_a_sea():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Hill", hand=0)
        .region(1, seat=0)
        .active(1, "Humans", "Seafaring", hand=0)
        .region(0, seat=1)
        .at(0, "start")
        .build()
    )
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "convert", 0, region=0)


def test_in_decline_sorcerers_convert_no_more():
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Sorcerers", "Forest")
        .region(3, seat=0, declined=True)
        .active(0, "Ratmen", "Hill", hand=0)
        .region(2, seat=0, tokens=3)
        .active(1, "Humans", "Swamp", hand=0)
        .region(4, seat=1)
        .at(0, "start")
        .build()
    )
    assert converts(state) == set()
    with pytest.raises(IllegalAction, match="belongs to Sorcerers"):
        act(state, "convert", 0, region=4)


@pytest.mark.parametrize("power", ["Flying", "Underworld"])
def test_flying_and_underworld_stretch_the_conversions_reach(power):
    """Rulings: a conversion is a conquest, so a power that widens where the race may conquer widens it too
    (this test pinned the earlier reading, "a region bordering a Sorcerer region on the board")."""
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", power, hand=0)
        .region(3, seat=0)
        .active(1, "Humans", "Swamp", hand=0)
        .region(17, seat=1)
        .at(0, "start")
        .build()
    )
    # 17 is a Cavern like 3, and any land region is in reach of a Flying race's conquests.
    assert converts(state) == {17}
    state = act(state, "convert", 0, region=17)
    assert region_of(state, 17) == {"owner": 0, "race": "Sorcerers", "tokens": 1}
    check_invariants(state)


def test_underworld_sorcerers_convert_in_a_cavern_they_do_not_border():
    """Rulings (components.md): "Underworld Sorcerers may convert a lone token in any Cavern while they hold
    a Cavern"; a region that is neither next to them nor a Cavern stays out of reach."""
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Underworld", hand=0)
        .region(3, seat=0)  # a Cavern
        .active(1, "Humans", "Swamp", hand=0)
        .region(14, seat=1)  # a Cavern, not next to 3
        .region(10, seat=1)  # neither
        .at(0, "start")
        .build()
    )
    assert converts(state) == {14}
    with pytest.raises(IllegalAction, match="not adjacent to one of your Sorcerer regions"):
        act(state, "convert", 0, region=10)
    state = act(state, "convert", 0, region=14)
    assert region_of(state, 14)["race"] == "Sorcerers"
    assert state.t.conquered == [14] and state.t.nonempty_conquered == 1  # a conquest of a non-empty region


def test_sorcerers_holding_no_cavern_reach_no_cavern_beyond_their_border():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Underworld", hand=0)
        .region(4, seat=0)  # not a Cavern
        .active(1, "Humans", "Swamp", hand=0)
        .region(14, seat=1)
        .at(0, "start")
        .build()
    )
    assert converts(state) == set()
