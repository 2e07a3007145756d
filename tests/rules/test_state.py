"""``GameState.regions_of`` remembers its answers while a state is read (``reading``) or edited (from
``fork`` to ``done``); they stay those of a scan of the regions, whatever is edited in between, also
through a RegionState kept from ``edit_region`` and changed after the question."""

from __future__ import annotations

import random

from rules import GameState, apply, new_game, read_state
from rules.bots import random_player
from rules.state import LOST_TRIBE, RegionState


def scan(state: GameState, seat: int, race: str | None) -> list[int]:
    return [i for i, r in enumerate(state.regions) if r.owner == seat and r.race == race]


def some_states() -> list[GameState]:
    out = []
    for seed in range(4):
        rnd = random.Random(seed)
        state = new_game(2 + seed, seed=seed)
        step = 0
        while not state.over:
            if step % 40 == 0:
                out.append(state)
            state = apply(state, random_player(state, rnd))
            step += 1
    return out


def test_regions_of_while_editing_answers_as_a_scan_does() -> None:
    rnd = random.Random(0)
    for state in some_states():
        before = state.to_json()
        holders = sorted({(r.owner, r.race) for r in state.regions if r.owner >= 0}, key=repr)
        holders += [(s, "Ratmen") for s in range(len(state.players))]
        new = state.fork()
        kept = []  # RegionStates from edit_region, changed later on
        for _ in range(200):
            seat, race = rnd.choice(holders)
            what = rnd.random()
            if what < 0.4:
                assert new.regions_of(seat, race) == scan(new, seat, race)
            elif what < 0.7:
                kept.append(new.edit_region(rnd.randrange(len(new.regions))))
            elif kept:
                r = rnd.choice(kept)
                if rnd.random() < 0.3:
                    r.clear_occupant()
                else:
                    r.owner, r.race, r.tokens = seat, race, 1 + r.tokens
        for seat, race in holders:
            assert new.regions_of(seat, race) == scan(new, seat, race)
        new.done()
        assert state.to_json() == before  # the edits went to copies
        for seat, race in holders:
            assert new.regions_of(seat, race) == scan(new, seat, race)


def test_regions_of_while_reading_answers_as_a_scan_does() -> None:
    for state in some_states():
        with state.reading():
            for _ in range(2):  # asked again: the remembered answer
                for seat in range(len(state.players)):
                    for race in ("Ratmen", LOST_TRIBE, *(t.race for t in state.players[seat].troops())):
                        held = state.regions_of(seat, race)
                        assert held == scan(state, seat, race)
                        held.append(99)  # a new list each time: the caller may change it
        assert state._holdings is None


def holdings(state: GameState) -> dict[tuple[int, str | None], list[int]]:
    """Every (owner, race) on the board with its regions, from a scan."""
    out: dict[tuple[int, str | None], list[int]] = {}
    for i, r in enumerate(state.regions):
        out.setdefault((r.owner, r.race), []).append(i)
    return out


def test_the_holdings_index_apply_carries_is_that_of_a_scan_after_every_step() -> None:
    for game in range(8):
        rnd = random.Random(game)
        mode = "ask" if game % 2 else "auto"
        state = new_game(2 + game % 4, seed=game, options={"redeploy": mode})
        while not state.over:
            state = apply(state, random_player(state, rnd))
            assert state._held == holdings(state), state.last
            for seat in range(len(state.players)):
                for race in (LOST_TRIBE, *(t.race for t in state.players[seat].troops())):
                    assert state.regions_of(seat, race) == scan(state, seat, race)


def test_a_state_changed_by_hand_is_scanned_and_apply_indexes_what_it_holds() -> None:
    state = new_game(3, seed=5)
    assert state._held is None  # not made by apply: no index to trust
    rnd = random.Random(5)
    state = apply(state, random_player(state, rnd))  # seat 0 picks
    race = state.players[0].active.race  # type: ignore[union-attr]
    by_hand = read_state(state.to_json())
    assert by_hand._held is None
    by_hand.regions[7].owner, by_hand.regions[7].race, by_hand.regions[7].tokens = 0, race, 3
    assert by_hand.regions_of(0, race) == scan(by_hand, 0, race) == [7]
    after = apply(by_hand, random_player(by_hand, rnd))
    assert after._held == holdings(after)
    assert 7 in after.regions_of(0, race) or after.regions[7].owner != 0


def test_an_index_a_change_by_hand_made_wrong_is_worked_out_again_when_the_edit_ends() -> None:
    rnd = random.Random(5)
    state = new_game(3, seed=5)
    state = apply(state, random_player(state, rnd))  # indexed
    empty = next(i for i, r in enumerate(state.regions) if r.owner < 0 and r.race is None)
    # Against the contract (a state apply made changes only through fork, edit_* and done): the index
    # still has the region empty.
    state.regions[empty] = RegionState(owner=0, race="Ratmen", tokens=1)
    new = state.fork()
    new.edit_region(empty).clear_occupant()
    new.done()
    assert new._held == holdings(new)
