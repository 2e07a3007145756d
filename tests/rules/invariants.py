"""Invariants every reachable game state keeps; checked after every step of the property tests
(and by ``tests/rules/builder.py`` on every state it builds)."""

from __future__ import annotations

from collections import Counter

from rules import POWERS, RACES, GameState, read_state, region_markers
from rules.abilities import POWERS as POWER_TABLE
from rules.components import (
    ENCAMPMENTS,
    FORTRESSES,
    HEROES,
    HOLES,
    LOST_TRIBE_TOKENS,
    RACE_TOKENS,
    TROLL_LAIRS,
    VISIBLE_COMBOS,
)
from rules.designs import game_powers, game_races
from rules.regions import all_markers
from rules.state import CONQUER, DEFEND, LOST_TRIBE, OVER, PICK, REDEPLOY, START
from rules.troops import aside

PHASES = (PICK, START, CONQUER, REDEPLOY, DEFEND, OVER)
#: The markers that lie only with an Active race.
ACTIVE_ONLY_MARKERS = frozenset({"hero", "dragon", "hole", "encampments"})


def check_invariants(state: GameState) -> dict:
    """Assert the invariants; return the state's JSON form (checked to round-trip exactly)."""
    board = state.board
    n = len(state.players)
    assert 2 <= n <= 5, n
    assert len(state.regions) == len(board)
    # The turn: a spot on the track, a seat, a phase that fits the seat.
    assert state.turns == board.turns and 1 <= state.turn <= state.turns, (state.turn, state.turns)
    assert 0 <= state.current < n and state.phase in PHASES, (state.current, state.phase)
    on_turn = state.players[state.current]
    if state.phase == PICK:
        assert on_turn.active is None, "a player with an Active race does not pick"
    if state.phase in (START, CONQUER):
        assert on_turn.active is not None, "conquests need an Active race"
    if state.phase == DEFEND:
        assert state.defenders and len(set(state.defenders)) == len(state.defenders)
        assert state.current not in state.defenders
        assert all(0 <= s < n for s in state.defenders)
    else:
        assert state.defenders == [], state.defenders
    assert state.options.get("redeploy") in ("auto", "ask"), state.options
    assert 0 <= state.rng < 1 << 64
    # Regions: one occupant at most, never empty-but-owned, water only for Seafaring races, markers
    # only with the race or power they belong to.
    on_board: Counter[str] = Counter()
    heroes: Counter[int] = Counter()
    holes: Counter[int] = Counter()
    camps: Counter[int] = Counter()
    # The markers of every region, read at once from every ability's state; ``region_markers`` (one region, from
    # the table of the state's markers worked out once: ``GameState.derived``) agrees on every region.
    all_marks = all_markers(state)
    assert len(all_marks) == len(state.regions)
    for i, marks in enumerate(all_marks):
        assert region_markers(state, i) == marks, (i, marks)
    for i, (land, r, marks) in enumerate(zip(board.regions, state.regions, all_marks, strict=True)):
        assert r.tokens >= 0, (i, r)
        assert r.mountain == (land.terrain == "mountain"), (i, r)
        if r.tokens == 0:
            assert r.owner == -1 and r.race is None, (i, r)
            assert not marks, (i, r, marks)
            continue
        assert r.race is not None, (i, r)
        on_board[r.race] += r.tokens
        if r.race == LOST_TRIBE:
            assert r.owner == -1 and r.tokens == 1, (i, r)
            assert not marks, (i, r, marks)
            continue
        assert 0 <= r.owner < n, (i, r)
        troop = state.players[r.owner].troop_of(r.race)
        assert troop is not None, (i, r, "region held by a race its owner does not have")
        if land.is_water:
            assert POWER_TABLE[troop.power].sails, (i, r, "only Seafaring races hold water")
        if not marks:  # most regions: none of the markers' rulings below can fail
            continue
        assert all(isinstance(n, bool) or n > 0 for n in marks.values()), (i, marks)
        if troop.declined:
            assert not (ACTIVE_ONLY_MARKERS & marks.keys()), (i, r, marks)
        # Rulings: Troll's Lairs leave the board with their Trolls; the other markers belong to the
        # power (or race) that placed them.
        assert "lair" not in marks or r.race == "Trolls", (i, r)
        assert "fortress" not in marks or troop.power == "Fortified", (i, r)
        assert "encampments" not in marks or troop.power == "Bivouacking", (i, r)
        assert "hero" not in marks or troop.power == "Heroic", (i, r)
        assert "dragon" not in marks or troop.power == "Dragon Master", (i, r)
        assert "hole" not in marks or r.race == "Halflings", (i, r)
        heroes[r.owner] += "hero" in marks
        holes[r.owner] += "hole" in marks
        camps[r.owner] += int(marks.get("encampments", 0))
    # Box limits (components.md).
    off_board: Counter[str] = Counter()
    for p in state.players:
        for t in p.troops():
            off_board[t.race] += t.hand + aside(state, t)
    for race in game_races(state):  # the host's race has its stand-in's box (rules/designs.py)
        box = RACE_TOKENS[race][1] if race in RACE_TOKENS else RACES[race].box_tokens()
        assert on_board[race] + off_board[race] <= box, (race, on_board[race], off_board[race], box)
    assert on_board[LOST_TRIBE] <= LOST_TRIBE_TOKENS
    assert sum("fortress" in m for m in all_marks) <= FORTRESSES
    assert sum("lair" in m for m in all_marks) <= TROLL_LAIRS
    assert sum("dragon" in m for m in all_marks) <= 1
    for seat, p in enumerate(state.players):
        assert p.coins >= 0, (seat, p.coins)
        assert heroes[seat] <= HEROES and holes[seat] <= HOLES, seat
        if p.active is not None:
            assert not p.active.declined
            bivouacking = state.abilities.get("Bivouacking")
            aside_camps = bivouacking.aside if bivouacking and p.active.power == "Bivouacking" else 0
            assert camps[seat] + aside_camps <= ENCAMPMENTS, (seat, camps[seat], aside_camps)
        assert all(t.declined for t in p.declined)
        counting = [t for t in p.declined if POWERS[t.power].counts_toward_decline_limit]
        assert len(counting) <= 1, (seat, p.declined)
        assert len(p.declined) <= 2
        for t in p.troops():
            assert t.hand >= 0 and aside(state, t) >= 0, t
        assert p.auto_passes >= 0
    # Every banner is somewhere exactly once; every badge too.
    races_seen = [c.race for c in state.combos] + list(state.race_stack)
    races_seen += [t.race for p in state.players for t in p.troops()]
    assert sorted(races_seen) == game_races(state), races_seen
    powers_seen = [c.power for c in state.combos] + state.power_stack + state.power_discard
    for p in state.players:
        if p.active is not None:
            powers_seen.append(p.active.power)
        powers_seen += [t.power for t in p.declined if not POWERS[t.power].counts_toward_decline_limit]
    assert sorted(powers_seen) == game_powers(state), sorted(powers_seen)
    assert len(state.combos) <= VISIBLE_COMBOS
    assert all(c.coins >= 0 for c in state.combos)
    # The column is full while banners remain under it (rulebook: "always 6 combos visible").
    assert len(state.combos) == VISIBLE_COMBOS or not state.race_stack
    peace = state.abilities.get("Diplomat")
    if peace is not None:  # the Diplomat at peace with another seat, the Diplomat's race Active
        assert 0 <= peace.ally < n and peace.ally != peace.diplomat, peace
        diplomat = state.players[peace.diplomat].active
        assert diplomat is not None and diplomat.power == "Diplomat", peace
    # The races' and powers' own state: absent when unused, and read back as written.
    for name, value in state.abilities.items():
        assert value != type(value)(), (name, "an empty slot is left out")
    for name, value in state.t.abilities.items():
        assert value != type(value)(), (name, "an empty slot is left out")
    assert isinstance(state.last.get("undo_point"), bool), state.last
    # JSON round-trips exactly.
    data = state.to_json()
    again = read_state(data)
    assert again == state
    assert again.to_json() == data
    return data
