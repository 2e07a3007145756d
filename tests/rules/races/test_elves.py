"""Elves: no token discarded when a region of theirs is conquered (rulebook, "Elves")."""

from rules import legal_actions
from rules.troops import box_left
from tests.rules.builder import Builder, act


def attack(defender: str, tokens: int, *, declined: bool = False):
    b = Builder(2).clear_board().active(0, "Ratmen", "Commando", hand=10).region(3, seat=0)
    if declined:
        b.declined(1, defender).region(4, seat=1, tokens=tokens, declined=True)
    else:
        b.active(1, defender, "Hill", hand=0).region(4, seat=1, tokens=tokens).region(10, seat=1)
    state = b.at(0, "conquer").build()
    return act(state, "conquer", 0, region=4)


def test_conquered_elves_keep_every_token_in_hand():
    state = attack("Elves", 3)
    assert state.players[1].active.hand == 3


def test_other_races_discard_one_token_when_conquered():
    state = attack("Humans", 3)
    assert state.players[1].active.hand == 2


def test_the_elves_redeploy_all_of_them_at_the_end_of_the_turn():
    state = attack("Elves", 3)
    state = act(state, "end_conquest", 0)
    state = act(state, "redeploy", 0, tokens=((3, 1), (4, 10)))
    state = act(state, "end_turn", 0)  # auto rule: the 3 Elves go to region 10
    assert state.regions[10].tokens == 4 and state.players[1].active.hand == 0


def test_elves_in_decline_lose_their_token_like_anyone():
    state = attack("Elves", 1, declined=True)
    assert state.players[1].declined == []  # the last In Decline Elf was wiped off: the race left
    assert "Elves" in state.race_stack + [c.race for c in state.combos]


def test_an_elf_converted_by_sorcerers_is_lost():
    state = (
        Builder(2)
        .clear_board()
        .active(0, "Sorcerers", "Hill", hand=0)
        .region(3, seat=0)
        .active(1, "Elves", "Swamp", hand=0)
        .region(4, seat=1)
        .region(10, seat=1)
        .at(0, "start")
        .build()
    )
    assert any(a.type == "convert" and a.region == 4 for a in legal_actions(state, 0))
    state = act(state, "convert", 0, region=4)
    assert state.players[1].active.hand == 0
    assert box_left(state, "Elves") == 11 - 1
