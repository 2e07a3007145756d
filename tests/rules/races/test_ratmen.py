"""Ratmen: no benefit but their number (rulebook, "Ratmen")."""

from rules import turn_score
from tests.rules.builder import Builder, act


def test_ratmen_get_eight_tokens_plus_the_badge():
    state = Builder(2).combos(("Ratmen", "Hill"), ("Humans", "Swamp")).at(0, "pick").build()
    assert act(state, "pick", 0, combo=0).players[0].active.hand == 8 + 4


def test_ratmen_score_their_regions_and_nothing_more():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Ratmen", "Commando")
        .region(1, seat=0)
        .region(2, seat=0)
        .region(5, seat=0)
        .region(10, seat=0)
        .at(0, "redeploy")
        .build()
    )
    # Farmland, Mine, Magic, Cavern: no race bonus for any of them.
    assert turn_score(state, 0) == {"regions": 4, "bonus": {}, "total": 4}


def test_ratmen_pay_the_full_conquest_cost():
    state = Builder(2).active(0, "Ratmen", "Hill", hand=3).at(0, "conquer").build()
    from rules import conquest_cost

    troop = state.players[0].active
    assert conquest_cost(state, 0, troop, 3) == 3  # 2 + the Lost Tribe
    assert conquest_cost(state, 0, troop, 5) == 3  # 2 + the Mountain
