"""The final conquest and the reinforcement die (rulebook, "Final Conquest Attempt/Reinforcement Die
Roll"; components.md, die faces and "Rulings")."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from rules import IllegalAction, legal_actions, rng
from rules.components import DIE_FACES
from rules.conquest import roll_die
from rules.state import REDEPLOY

from .builder import Builder, act, region_of
from .invariants import check_invariants


def rng_rolling(face: int) -> int:
    """A generator word whose next die roll shows ``face``."""
    for word in range(1000):
        if DIE_FACES[rng.below(word, 6)[1]] == face:
            return word
    raise AssertionError(face)


def with_die(state, face: int):
    return dataclasses.replace(state, rng=rng_rolling(face))


def ratmen(hand: int) -> Builder:
    """Seat 0's Active Ratmen hold region 1 (2-player board) with ``hand`` tokens in hand."""
    b = Builder(2, seed=1).clear_board().active(0, "Ratmen", "Merchant", hand=hand)
    return b.region(1, seat=0, tokens=1).at(0, "conquer")


def test_the_die_has_faces_0_0_0_1_2_3() -> None:
    assert DIE_FACES == (0, 0, 0, 1, 2, 3)
    state = Builder(2).build()
    counts: Counter[int] = Counter()
    for word in range(6000):
        counts[roll_die(dataclasses.replace(state, rng=word))] += 1
    assert set(counts) == {0, 1, 2, 3}
    assert 2700 < counts[0] < 3300  # three faces in six
    for face in (1, 2, 3):
        assert 850 < counts[face] < 1150


@pytest.mark.parametrize(("hand", "offered"), [(4, "conquer"), (3, "final_conquest"), (1, "final_conquest")])
def test_the_die_is_offered_only_for_a_target_1_to_3_short(hand: int, offered: str) -> None:
    """Rulings: a target paid outright is simply conquered; the die is for 1 to 3 short."""
    state = ratmen(hand).active(1, "Humans", "Alchemist").region(2, seat=1, tokens=2).build()  # cost 4
    kinds = {a.type for a in legal_actions(state, 0) if a.region == 2}
    assert kinds == {offered}


def test_no_die_for_a_target_more_than_3_short() -> None:
    state = ratmen(1).active(1, "Humans", "Alchemist").region(2, seat=1, tokens=3).build()  # cost 5
    assert not [a for a in legal_actions(state, 0) if a.region == 2]
    with pytest.raises(IllegalAction, match="needs 5 tokens, you have 1: more than 3 short"):
        act(state, "final_conquest", 0, region=2)


def test_no_die_for_a_target_that_can_be_paid_outright() -> None:
    state = ratmen(3).build()
    with pytest.raises(IllegalAction, match="conquer region 2 outright with 2 tokens; no die needed"):
        act(state, "final_conquest", 0, region=2)


def test_the_final_conquest_needs_a_token_in_hand() -> None:
    state = ratmen(0).build()
    with pytest.raises(IllegalAction, match="at least one token in hand"):
        act(state, "final_conquest", 0, region=2)


def test_the_target_must_be_conquerable_apart_from_the_tokens() -> None:
    state = ratmen(1).build()
    with pytest.raises(IllegalAction, match="not adjacent"):
        act(state, "final_conquest", 0, region=13)
    with pytest.raises(IllegalAction, match="only a Seafaring race"):
        act(state, "final_conquest", 0, region=0)


@pytest.mark.parametrize("face", [0, 1, 2, 3])
def test_worked_example_two_tokens_against_a_lost_tribe_on_a_mountain(face: int) -> None:
    """A Lost Tribe on the Mountain 5 costs 2 + 1 + 1 = 4; with 2 tokens in hand the player names
    region 5, then rolls: 2 or 3 conquers it with both tokens; 0 or 1 fails. Either way the
    conquests end."""
    state = with_die(ratmen(2).region(5).build(), face)
    after = act(state, "final_conquest", 0, region=5)
    check_invariants(after)
    assert after.last["die"] == face
    assert after.phase == REDEPLOY
    troop = after.players[0].active
    assert troop is not None
    if face >= 2:
        assert region_of(after, 5) == {"owner": 0, "race": "Ratmen", "tokens": 2, "mountain": True}
        assert troop.hand == 0
        assert after.t.conquered == [5]
    else:
        assert region_of(after, 5) == {"race": "Lost Tribe", "tokens": 1, "mountain": True}
        assert troop.hand == 2  # placed in a region already held, at redeployment
        after = act(after, "redeploy", 0, tokens=((1, 3),))
        assert region_of(after, 1) == {"owner": 0, "race": "Ratmen", "tokens": 3}


def test_success_deploys_every_remaining_token() -> None:
    """Rulebook: "the player deploys his remaining Race token(s) there"."""
    state = with_die(ratmen(3).region(5).build(), 3)  # cost 4, 3 in hand, roll 3
    after = act(state, "final_conquest", 0, region=5)
    assert after.regions[5].tokens == 3 and after.players[0].active.hand == 0  # type: ignore[union-attr]


def test_the_target_is_chosen_before_the_roll() -> None:
    """The action names the region; the roll comes from the state's generator after it, so the same
    state gives the same roll whatever the target (and a player cannot see the roll first)."""
    state = ratmen(1).region(5).region(2).build()
    a = act(state, "final_conquest", 0, region=5)
    b = act(state, "final_conquest", 0, region=2)
    assert a.last["die"] == b.last["die"]
    assert a.rng == b.rng != state.rng


def test_the_final_conquest_ends_the_conquests_either_way() -> None:
    for face in (0, 3):
        state = with_die(ratmen(5).region(5).region(6).build(), face)
        after = act(act(state, "conquer", 0, region=5), "final_conquest", 0, region=6)
        assert after.phase == REDEPLOY
        with pytest.raises(IllegalAction, match="conquests for this turn are over"):
            act(after, "conquer", 0, region=2)
        assert not [a for a in legal_actions(after, 0) if "conquer" in a.type]


def test_a_conquest_needing_more_than_the_hand_hints_at_the_die() -> None:
    state = ratmen(1).build()
    with pytest.raises(IllegalAction, match="needs 2 tokens, you have 1 in hand .*final conquest"):
        act(state, "conquer", 0, region=2)
