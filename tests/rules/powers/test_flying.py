"""Flying: conquer any land region, adjacent or not, the first conquest too; never Seas or the Lake
(rulebook, "Flying"; rulings)."""

import pytest

from rules import IllegalAction, legal_actions
from tests.rules.builder import Builder, act, region_of


def test_flying_conquers_regions_far_from_its_own():
    state = Builder(2).clear_board().active(0, "Ratmen", "Flying", hand=6).region(1, seat=0).at(0, "conquer").build()
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert offered == {i for i in range(23) if i not in (0, 1, 7, 22)}
    assert region_of(act(state, "conquer", 0, region=20), 20)["race"] == "Ratmen"


def test_the_first_conquest_may_be_on_any_land_region():
    state = Builder(2).combos(("Ratmen", "Flying"), ("Humans", "Hill")).at(0, "pick").build()
    state = act(state, "pick", 0, combo=0)
    state = act(state, "conquer", 0, region=9)  # inland
    assert region_of(state, 9)["race"] == "Ratmen"


@pytest.mark.parametrize("water", [0, 7, 22])
def test_flying_never_takes_the_seas_or_the_lake(water):
    state = Builder(2).clear_board().active(0, "Ratmen", "Flying", hand=6).region(1, seat=0).at(0, "conquer").build()
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "conquer", 0, region=water)


def test_without_flying_far_regions_are_refused():
    state = Builder(2).clear_board().active(0, "Ratmen", "Hill", hand=6).region(1, seat=0).at(0, "conquer").build()
    with pytest.raises(IllegalAction, match="not adjacent"):
        act(state, "conquer", 0, region=20)
