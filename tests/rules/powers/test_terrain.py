"""Forest, Hill and Swamp: +1 coin per region of that terrain the Active race holds at the end of the
turn (rulebook, "Forest", "Hill", "Swamp").

On the 2-player board: Forest regions 2, 10, 12, 21; Hill regions 4, 6, 14, 17; Swamp regions 3, 16,
18, 20. Each case names three regions of its terrain and one region of another terrain.
"""

import pytest

from rules import turn_score
from tests.rules.builder import Builder, act

TERRAIN_POWERS = pytest.mark.parametrize(
    ("power", "terrain", "regions", "elsewhere"),
    [
        pytest.param("Forest", "forest", (2, 10, 12), 4, id="Forest"),
        pytest.param("Hill", "hill", (4, 6, 14), 9, id="Hill"),
        pytest.param("Swamp", "swamp", (3, 16, 18), 4, id="Swamp"),
    ],
)


@TERRAIN_POWERS
def test_each_region_of_the_terrain_is_worth_one_more_coin(power, terrain, regions, elsewhere):
    first, second, _ = regions
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", power, hand=0)
        .region(first, seat=0)
        .region(second, seat=0)
        .region(elsewhere, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # The cases are about the board they name: three regions of the terrain, one of another.
    assert [state.board.regions[i].terrain for i in regions] == [terrain] * 3
    assert state.board.regions[elsewhere].terrain != terrain
    assert turn_score(state, 0) == {"regions": 3, "bonus": {power: 2}, "total": 5}
    assert act(state, "end_turn", 0).last["score"]["bonus"] == {power: 2}


@TERRAIN_POWERS
def test_other_terrains_give_no_bonus(power, terrain, regions, elsewhere):
    state = (
        Builder(2).clear_board().active(0, "Ratmen", power, hand=0).region(elsewhere, seat=0).at(0, "redeploy").build()
    )
    assert turn_score(state, 0)["bonus"] == {}


@TERRAIN_POWERS
def test_nothing_on_the_turn_the_race_goes_in_decline(power, terrain, regions, elsewhere):
    first, second, _ = regions
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", power, hand=0)
        .region(first, seat=0, tokens=2)
        .region(second, seat=0)
        .at(0, "start")
        .build()
    )
    assert act(state, "decline", 0).last["score"] == {"regions": 2, "bonus": {}, "total": 2}


@TERRAIN_POWERS
def test_in_decline_regions_of_the_terrain_give_nothing_more(power, terrain, regions, elsewhere):
    first, _, third = regions
    state = (
        Builder(2)
        .clear_board()
        .declined(0, "Ratmen", power)
        .region(first, seat=0, declined=True)
        .active(0, "Humans", "Commando", hand=0)
        .region(third, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # `third` is the Active Humans' and they have no terrain badge; `first` is In Decline.
    assert turn_score(state, 0)["bonus"].get(power) is None
