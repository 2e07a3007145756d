"""Invariants every reachable game state keeps; checked after every step of the property tests."""

from __future__ import annotations

from rules import POWERS, RACES, GameState
from rules.abilities import POWERS as POWER_TABLE
from rules.components import (
    ENCAMPMENTS,
    FORTRESSES,
    HEROES,
    HOLES,
    LOST_TRIBE_TOKENS,
    RACE_TOKENS,
    TROLL_LAIRS,
)
from rules.state import LOST_TRIBE


def check_invariants(state: GameState) -> None:
    board = state.board
    assert len(state.regions) == len(board)
    # Regions: one occupant at most, never empty-but-owned, water only for Seafaring races.
    for i, r in enumerate(state.regions):
        assert r.tokens >= 0, (i, r)
        if r.tokens == 0:
            assert r.owner == -1 and r.race is None, (i, r)
            assert not (r.lair or r.fortress or r.encampments or r.hole or r.hero or r.dragon), (i, r)
        elif r.race == LOST_TRIBE:
            assert r.owner == -1 and r.tokens == 1, (i, r)
        else:
            troop = state.players[r.owner].troop_of(r.race)
            assert troop is not None, (i, r, "region held by a race its owner does not have")
            if board.regions[i].is_water:
                assert POWER_TABLE[troop.power].sails, (i, r, "only Seafaring races hold water")
            if troop.declined:
                assert not (r.hero or r.dragon or r.hole or r.encampments), (i, r)
        assert r.mountain == (board.regions[i].terrain == "mountain"), (i, r)
    # Box limits (components.md).
    for race, (_, box) in RACE_TOKENS.items():
        on_board = sum(r.tokens for r in state.regions if r.race == race)
        off_board = sum(
            t.hand + t.held for p in state.players for t in p.troops() if t.race == race
        )
        assert on_board + off_board <= box, (race, on_board, off_board, box)
    assert sum(r.tokens for r in state.regions if r.race == LOST_TRIBE) <= LOST_TRIBE_TOKENS
    assert sum(r.fortress for r in state.regions) <= FORTRESSES
    assert sum(r.lair for r in state.regions) <= TROLL_LAIRS
    assert sum(r.dragon for r in state.regions) <= 1
    for seat, p in enumerate(state.players):
        assert p.coins >= 0, (seat, p.coins)
        mine = [i for i, r in enumerate(state.regions) if r.owner == seat]
        assert sum(state.regions[i].hero for i in mine) <= HEROES
        assert sum(state.regions[i].hole for i in mine) <= HOLES
        if p.active is not None:
            assert not p.active.declined
            camps = sum(state.regions[i].encampments for i in mine) + p.active.camps
            assert camps <= ENCAMPMENTS, (seat, camps)
        assert all(t.declined for t in p.declined)
        counting = [t for t in p.declined if POWERS[t.power].counts_toward_decline_limit]
        assert len(counting) <= 1, (seat, p.declined)
        assert len(p.declined) <= 2
        for t in p.troops():
            assert t.hand >= 0 and t.held >= 0 and t.camps >= 0, t
    # Every banner is somewhere exactly once; every badge too.
    races_seen = [c.race for c in state.combos] + list(state.race_stack)
    races_seen += [t.race for p in state.players for t in p.troops()]
    assert sorted(races_seen) == sorted(RACES), races_seen
    powers_seen = [c.power for c in state.combos] + list(state.power_stack) + list(state.power_discard)
    for p in state.players:
        if p.active is not None:
            powers_seen.append(p.active.power)
        powers_seen += [t.power for t in p.declined if not POWERS[t.power].counts_toward_decline_limit]
    assert sorted(powers_seen) == sorted(POWERS), sorted(powers_seen)
    assert len(state.combos) <= 6
    # JSON round-trips exactly.
    data = state.to_json()
    again = GameState.from_json(data)
    assert again == state
    assert again.to_json() == data
