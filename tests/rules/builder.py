"""A small builder of rule states for tests.

Start from a real game (``rules.new_game``) and change only what a test is about::

    state = (
        Builder(3, seed=1)
        .clear_board()                      # no Lost Tribes: an empty map (Mountains stay)
        .active(0, "Ratmen", "Hill")        # 8 + 4 tokens in hand
        .region(3, seat=0, tokens=2)        # region 3 held by seat 0's Active Ratmen
        .region(4, seat=1, tokens=1, race="Orcs")
        .at(0, "start")                     # seat 0 on turn, before readying troops
        .build()                            # checks tests/rules/invariants.py
    )

Banners and badges are taken from wherever they lie (column, stacks, discards) so every piece stays
somewhere exactly once; a combo that loses its banner or badge gets the next one from the stack.

Markers, a troop's extras and flags of the turn that belong to a race or power are given by their
schema-1 names (``lair=True``, ``held=4``, ``berserk_die=2``…) and land in that ability's own state
(:data:`TROOP_EXTRAS`, :data:`TURN_EXTRAS`, ``rules.regions.set_region_marker``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rules import Action, GameState, apply, new_game, region_markers
from rules.abilities import ABILITIES, MARKERS, POWERS, RACES
from rules.combos import replenish
from rules.regions import set_region_marker
from rules.state import (
    CONQUER,
    LOST_TRIBE,
    PICK,
    REDEPLOY,
    START,
    Combo,
    Phase,
    RegionState,
    Troop,
    TurnState,
)
from rules.troops import box_left

from .invariants import check_invariants

#: Troop fields of schema 1 that are now a race's or power's own state: name -> (ability, slot field).
TROOP_EXTRAS = {"held": ("Amazons", "held"), "holes": ("Halflings", "dug"), "camps": ("Bivouacking", "aside")}
#: Turn flags of schema 1 that are now a race's or power's state for the turn: name -> (ability, field).
TURN_EXTRAS = {
    "berserk_die": ("Berserk", "die"),
    "ghouls_readied": ("Ghouls", "readied"),
    "ghouls_done": ("Ghouls", "done"),
    "dragon_used": ("Dragon Master", "used"),
    "fortress_placed": ("Fortified", "placed"),
    "converted": ("Sorcerers", "converted"),
    "skeletons_added": ("Skeletons", "added"),
}


def set_slot_field(state: GameState, name: str, field: str, value: Any, *, turn: bool = False) -> None:
    """Set one field of an ability's own state (``turn``: its state for this turn)."""
    set_slot_fields(state, name, turn=turn, **{field: value})


def set_slot_fields(state: GameState, name: str, *, turn: bool = False, **fields: Any) -> None:
    """Set fields of an ability's own state (``turn``: its state for this turn), e.g.
    ``set_slot_fields(state, "Diplomat", diplomat=1, ally=0)``."""
    ability = ABILITIES[name]
    kind = ability.turn_slot if turn else ability.slot
    assert kind is not None, name
    current = ability.read_turn(state, kind) if turn else ability.read(state, kind)
    for field, value in fields.items():
        if isinstance(getattr(current, field), frozenset):
            fields[field] = frozenset(value)
    updated = dataclasses.replace(current, **fields)
    if turn:
        ability.write_turn(state, updated)
    else:
        ability.write(state, updated)


class Builder:
    def __init__(
        self,
        players: int = 3,
        *,
        seed: int | str = 1,
        redeploy: str = "auto",
        map_name: str | None = None,
        custom: dict[str, Any] | None = None,
    ) -> None:
        # custom: the host's own race and power (rules/designs.py), named in the state's ``designs``
        self.state = new_game(players, seed=seed, map_name=map_name, options={"redeploy": redeploy}, custom=custom)
        self._default_hand: set[str] = set()

    # -- the map -----------------------------------------------------------------------------------
    def clear_board(self) -> Builder:
        """Remove every token and marker except the Mountains (which belong to the board)."""
        for i, r in enumerate(self.state.regions):
            r.clear_occupant()
            self._clear_markers(i)
        return self

    def _clear_markers(self, i: int) -> None:
        for name in region_markers(self.state, i):
            set_region_marker(self.state, i, name, 0)

    def region(
        self,
        i: int,
        *,
        seat: int = -1,
        tokens: int = 1,
        race: str | None = None,
        declined: bool = False,
        **markers: Any,
    ) -> Builder:
        """Put ``tokens`` of a race on region ``i``.

        ``seat``: the owner; the race defaults to that seat's Active race (``declined=True``: its
        In Decline race). ``markers``: ``lair``, ``fortress``, ``encampments``, ``hole``, ``hero``,
        ``dragon``.
        ``seat=-1`` with no race puts a Lost Tribe.
        """
        if seat < 0:
            race = race or LOST_TRIBE
        elif race is None:
            player = self.state.players[seat]
            troop = player.declined[-1] if declined and player.declined else player.active
            kind = "In Decline" if declined else "Active"
            assert troop is not None, f"seat {seat} has no {kind} race"
            race = troop.race
        mountain = self.state.regions[i].mountain
        self.state.regions[i] = RegionState(owner=seat, race=race, tokens=tokens, mountain=mountain)
        self._clear_markers(i)
        for name, value in markers.items():
            assert name in MARKERS, name
            set_region_marker(self.state, i, name, value)
        return self

    def empty(self, *regions: int) -> Builder:
        """Empty these regions (Mountains stay)."""
        for i in regions:
            self.state.regions[i].clear_occupant()
            self._clear_markers(i)
        return self

    # -- players -----------------------------------------------------------------------------------
    def active(self, seat: int, race: str, power: str, *, hand: int | None = None, **fields: Any) -> Builder:
        """Give ``seat`` an Active troop.

        ``hand`` defaults to what is left of banner + badge once the regions given to the troop are
        counted, capped by the box (worked out by :meth:`build`). The same race and power again
        changes the hand and fields only; another troop replaces it (its regions are emptied).

        ``fields``: other :class:`rules.state.Troop` fields (``picked_turn``), or the troop's extras
        kept by its race or power (``held``, ``holes``, ``camps``: :data:`TROOP_EXTRAS`).
        """
        player = self.state.players[seat]
        if player.active is not None and (player.active.race, player.active.power) == (race, power):
            self._default_hand.discard(race)  # the same troop again: new hand and fields, same regions
        else:
            if player.active is not None:
                self._release(player.active)
                player.active = None
            self._take(race, power)
        extras = {name: fields.pop(name) for name in list(fields) if name in TROOP_EXTRAS}
        player.active = Troop(race, power, hand=hand or 0, **fields)
        for name, value in extras.items():
            ability, field = TROOP_EXTRAS[name]
            if ability not in (race, power):
                assert not value, f"{name} belongs to {ability}"  # 0: nothing kept, nothing to set
                continue
            set_slot_field(self.state, ability, field, value)
        if hand is None:
            self._default_hand.add(race)
        return self

    def declined(self, seat: int, race: str, power: str = "Hill", *, hand: int = 0) -> Builder:
        """Give ``seat`` an In Decline troop (its badge is in the discards, unless Spirit)."""
        self._take(race, power)
        troop = Troop(race, power, declined=True, hand=hand)
        if POWERS[power].counts_toward_decline_limit:
            self.state.power_discard.append(power)
        self.state.players[seat].declined.append(troop)
        return self

    def coins(self, seat: int, coins: int) -> Builder:
        self.state.players[seat].coins = coins
        return self

    # -- the column of combos ----------------------------------------------------------------------
    def combos(self, *column: tuple[str, str] | tuple[str, str, int]) -> Builder:
        """Set the column, top first: ``("Ratmen", "Hill")`` or ``("Ratmen", "Hill", coins)``.

        :meth:`build` fills the rest of the column from the stacks (while banners remain).
        """
        s = self.state
        s.race_stack[:0] = [c.race for c in s.combos]
        s.power_stack[:0] = [c.power for c in s.combos]
        s.combos = []
        for race, power, *coins in column:
            self._take(race, power)
            s.combos.append(Combo(race, power, coins[0] if coins else 0))
        return self

    def stacks(self, races: list[str] | None = None, powers: list[str] | None = None) -> Builder:
        """Put these pieces on top of the stacks under the column (the others follow in order)."""
        s = self.state
        if races is not None:
            assert set(races) <= set(s.race_stack), races
            s.race_stack = list(races) + [r for r in s.race_stack if r not in races]
        if powers is not None:
            assert set(powers) <= set(s.power_stack), powers
            s.power_stack = list(powers) + [p for p in s.power_stack if p not in powers]
        return self

    # -- the turn ----------------------------------------------------------------------------------
    def at(self, seat: int, phase: str | None = None, *, turn: int | None = None, **turn_fields: Any) -> Builder:
        """Seat ``seat`` on turn in ``phase`` (default: ``start`` with an Active race, else
        ``pick``).

        In ``conquer`` and ``redeploy`` the troops count as readied. ``turn_fields`` set
        :class:`rules.state.TurnState` fields (``conquests``...) or an ability's flags for the turn
        (``berserk_die``...: :data:`TURN_EXTRAS`).
        """
        s = self.state
        s.current = seat
        if turn is not None:
            s.turn = turn
        if phase is None:
            phase = START if s.players[seat].active is not None else PICK
        s.phase = Phase(phase)
        extras = {name: turn_fields.pop(name) for name in list(turn_fields) if name in TURN_EXTRAS}
        s.t = TurnState(readied=phase in (CONQUER, REDEPLOY), **turn_fields)
        for name, value in extras.items():
            ability, field = TURN_EXTRAS[name]
            if name == "skeletons_added":
                value = 0 if value else None
            set_slot_field(s, ability, field, value, turn=True)
        s.defenders = []
        return self

    def options(self, **options: Any) -> Builder:
        self.state.options.update(options)
        return self

    def build(self, *, check: bool = True) -> GameState:
        """The state (checked against the invariants). The builder must not be used afterwards."""
        state = self.state
        for p in state.players:
            if p.active is not None and p.active.race in self._default_hand:
                race, power = RACES[p.active.race], POWERS[p.active.power]
                on_board = sum(r.tokens for r in state.regions if r.race == p.active.race)
                left = box_left(state, p.active.race)
                p.active.hand = max(0, min(race.given_tokens() + power.given_tokens() - on_board, left))
        replenish(state)  # a column set short is filled from the stacks, as the engine would
        state.last = {"kind": "setup", "undo_point": True}
        state.done()  # no edit under way: a later change copies what it changes
        if check:
            check_invariants(state)
        return state

    # -- keeping every banner and badge somewhere exactly once -------------------------------------
    def _take(self, race: str, power: str) -> None:
        s = self.state
        assert race in RACES and power in POWERS, (race, power)
        for p in s.players:
            assert p.troop_of(race) is None, f"{race} is already held by a player"
        if race in s.race_stack:
            s.race_stack.remove(race)
        else:
            k = next(k for k, c in enumerate(s.combos) if c.race == race)
            s.combos[k] = Combo(s.race_stack.pop(0), s.combos[k].power, s.combos[k].coins)
        if power in s.power_stack:
            s.power_stack.remove(power)
        elif power in s.power_discard:
            s.power_discard.remove(power)
        else:
            found = [k for k, c in enumerate(s.combos) if c.power == power]
            assert found, f"{power} is already held by a player"
            k = found[0]
            s.combos[k] = Combo(s.combos[k].race, s.power_stack.pop(0), s.combos[k].coins)

    def _release(self, troop: Troop) -> None:
        """A troop replaced by the builder: banner under the stack, badge to the discards."""
        s = self.state
        self._default_hand.discard(troop.race)
        for i, r in enumerate(s.regions):
            if r.race == troop.race:
                r.clear_occupant()
                self._clear_markers(i)
        s.set_slot(troop.race, None)
        s.set_slot(troop.power, None)
        s.race_stack.append(troop.race)
        s.power_discard.append(troop.power)


def act(state: GameState, kind: str, player: int, **fields: Any) -> GameState:
    """``apply(state, Action(kind, player, **fields))``: one step, for short tests."""
    return apply(state, Action(kind, player, **fields))


def region_of(state: GameState, i: int) -> dict[str, Any]:
    """A region's JSON form with the markers on it, for readable asserts: ``{"owner": 0, "race": "Trolls",
    "tokens": 2, "lair": True}`` (the markers are in their ability's state: ``rules.region_markers``)."""
    return state.to_json()["regions"][i] | region_markers(state, i)


def slot(state: GameState, name: str, *, turn: bool = False) -> Any:
    """The own state of the race or power ``name`` (``turn``: for this turn), empty while unused."""
    ability = ABILITIES[name]
    kind = ability.turn_slot if turn else ability.slot
    assert kind is not None, name
    return ability.read_turn(state, kind) if turn else ability.read(state, kind)


def marker(state: GameState, i: int, name: str) -> Any:
    """The marker ``name`` on region ``i`` as schema 1's region field read: a flag (``hole``, ``lair``…), or
    a count for ``encampments``."""
    value = region_markers(state, i).get(name)
    if name == "encampments":
        return int(value or 0)
    return bool(value)
