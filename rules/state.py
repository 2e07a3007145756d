"""The game state: plain data, copied on write, with a versioned JSON form (see ``rules/README.md``).

:func:`rules.apply` never mutates the state it is given: it takes a shallow :meth:`GameState.fork` and
replaces each region, player or troop it touches with a copy first (``edit_region``, ``edit_player``…).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from .board import Board, load_board

T = TypeVar("T")

SCHEMA_VERSION = 3
LOST_TRIBE = "Lost Tribe"


class Phase(StrEnum):
    """The phases of a turn (ARCHITECTURE §4: a turn is a sequence of steps). Serialised as their plain string."""

    PICK = "pick"  # no Active race: pick a combo (an In Decline race that still conquers may do so first)
    START = "start"  # Active race on hand: go In Decline, or ready troops and conquer
    CONQUER = "conquer"  # conquests under way
    REDEPLOY = "redeploy"  # conquests over: redeploy, place markers, end the turn
    DEFEND = "defend"  # ``ask`` mode: attacked players redeploy their tokens in hand
    OVER = "over"


PICK, START, CONQUER, REDEPLOY, DEFEND, OVER = Phase
PHASES = tuple(Phase)

REDEPLOY_AUTO = "auto"
REDEPLOY_ASK = "ask"


@dataclass(slots=True)
class RegionState:
    """What lies on one region in the base game. ``owner`` is a seat, or -1 for nobody or the Lost Tribes.

    The markers of races and powers (Lairs, Fortresses…) are in their own state (``GameState.abilities``):
    ``rules.region_markers`` lists those on a region.
    """

    owner: int = -1
    race: str | None = None
    tokens: int = 0
    mountain: bool = False

    def copy(self) -> RegionState:
        # Slot by slot on a bare instance: about twice as fast as the dataclass __init__ (copied every step).
        out = _new_region(RegionState)
        out.owner = self.owner
        out.race = self.race
        out.tokens = self.tokens
        out.mountain = self.mountain
        return out

    @property
    def occupied(self) -> bool:
        """Rulebook, "The Races and Special Powers": non-empty means a Lost Tribe or Race token is there."""
        return self.tokens > 0

    def clear_occupant(self) -> None:
        """The occupant leaves (Mountains stay). ``rules.regions.vacate`` also takes away the markers that
        leave with it; this alone does not."""
        self.owner = -1
        self.race = None
        self.tokens = 0


@dataclass(slots=True)
class Troop:
    """One Race banner and its Special Power badge held by a player, Active or In Decline."""

    race: str
    power: str
    declined: bool = False
    hand: int = 0  # tokens off the board, to be placed this turn (or after an attack)
    picked_turn: int = 0  # the game turn the combo was picked (no decline on the pick turn)
    # The Hooks of the race and power (``abilities.hooks_of``), once asked: the same for every copy.
    hooks: Any = field(default=None, repr=False, compare=False)

    def copy(self) -> Troop:
        out = _new_troop(Troop)  # as RegionState.copy
        out.race, out.power, out.declined = self.race, self.power, self.declined
        out.hand, out.picked_turn, out.hooks = self.hand, self.picked_turn, self.hooks
        return out


@dataclass(slots=True)
class PlayerState:
    coins: int
    active: Troop | None = None
    declined: list[Troop] = field(default_factory=list)
    auto_passes: int = 0  # consecutive missed deadlines

    def copy(self) -> PlayerState:
        out = _new_player(PlayerState)  # as RegionState.copy
        active = self.active
        out.coins = self.coins
        out.active = None if active is None else active.copy()
        out.declined = [t.copy() for t in self.declined] if self.declined else []
        out.auto_passes = self.auto_passes
        return out

    def troops(self) -> list[Troop]:
        return ([self.active] if self.active else []) + self.declined

    def troop_of(self, race: str) -> Troop | None:
        if self.active is not None and self.active.race == race:
            return self.active
        for troop in self.declined:
            if troop.race == race:
                return troop
        return None


@dataclass(slots=True)
class Combo:
    race: str
    power: str
    coins: int = 0

    def copy(self) -> Combo:
        return Combo(self.race, self.power, self.coins)


@dataclass(slots=True)
class TurnState:
    """What happened so far in the current player's turn; reset when the turn passes."""

    picked: bool = False
    readied: bool = False  # the Active race's troops were readied (rulebook, "Ready your Troops")
    conquests: int = 0  # conquests by the Active race (every conquering step)
    conquered: list[int] = field(default_factory=list)
    nonempty_conquered: int = 0
    attacked: list[int] = field(default_factory=list)  # seats whose Active race was attacked
    #: Races' and powers' state for this turn, by name (``rules.abilities.Slot``).
    abilities: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def fresh() -> TurnState:
        """``TurnState()``, slot by slot (as RegionState.copy; a new one every turn)."""
        out = _new_turn(TurnState)
        out.picked = False
        out.readied = False
        out.conquests = 0
        out.conquered = []
        out.nonempty_conquered = 0
        out.attacked = []
        out.abilities = {}
        return out

    def copy(self) -> TurnState:
        out = _new_turn(TurnState)  # as RegionState.copy
        out.picked = self.picked
        out.readied = self.readied
        out.conquests = self.conquests
        out.conquered = list(self.conquered)
        out.nonempty_conquered = self.nonempty_conquered
        out.attacked = list(self.attacked)
        out.abilities = dict(self.abilities)
        return out

    def to_json(self) -> dict[str, Any]:
        """The fields that differ from their default (ARCHITECTURE §8: snapshots stay small)."""
        out: dict[str, Any] = {}
        if self.picked:
            out["picked"] = True
        if self.readied:
            out["readied"] = True
        if self.conquests:
            out["conquests"] = self.conquests
        if self.conquered:
            out["conquered"] = list(self.conquered)
        if self.nonempty_conquered:
            out["nonempty_conquered"] = self.nonempty_conquered
        if self.attacked:
            out["attacked"] = list(self.attacked)
        if self.abilities:
            out["abilities"] = {name: slot.to_json() for name, slot in self.abilities.items()}
        return out


@dataclass(slots=True)
class GameState:
    board_name: str
    turns: int
    turn: int
    current: int
    phase: Phase
    players: list[PlayerState]
    regions: list[RegionState]
    combos: list[Combo]
    race_stack: list[str]
    power_stack: list[str]
    power_discard: list[str]
    rng: int
    t: TurnState
    options: dict[str, Any]
    defenders: list[int] = field(default_factory=list)  # ``ask`` mode: seats still to redeploy, in order
    #: What the last step did: ``{"kind", "player", "undo_point", "die", "score"}`` (ARCHITECTURE §4, undo).
    last: dict[str, Any] = field(default_factory=dict)
    #: Races' and powers' own state, by name (``rules.abilities.Slot``; absent while unused): markers on
    #: the board, tokens kept aside… Replaced through :meth:`set_slot`, never changed in place.
    abilities: dict[str, Any] = field(default_factory=dict)
    #: The host's own race and power in this game (``rules/designs.py``), by their name in the game: each
    #: design's JSON, with ``replaces``, the official banner (or badge) whose place it took, or None. Fixed
    #: at setup and never changed, so a later edit of the design changes no running game (schema 3).
    designs: dict[str, Any] = field(default_factory=dict)
    # Copy-on-write bookkeeping for apply(); never serialised.
    _owned: set = field(default_factory=set, repr=False, compare=False)
    # regions_of answers remembered, (seat, race) -> regions, while a state without an index (below) is
    # read (``reading``).
    _holdings: dict[tuple[int, str | None], list[int]] | None = field(default=None, repr=False, compare=False)
    # The holdings index: (owner, race) -> its regions, ascending, for every region. A state ``apply`` made
    # carries one (worked out at ``fork`` from the state before it unless that one has it, and brought up
    # to date at ``done`` from the regions edited in between; a state forked from it keeps it); a state
    # made otherwise (``new_game``, ``read_state``, a builder) has none and is scanned. Shared between
    # states: never changed in place.
    _held: dict[tuple[int, str | None], list[int]] | None = field(default=None, repr=False, compare=False)
    # During an edit (``fork`` to ``done``): the regions edited, each with its (owner, race) before.
    _edited: dict[int, tuple[int, str | None]] = field(default_factory=dict, repr=False, compare=False)
    # What the abilities with state do, worked out from ``abilities`` once per hook (``abilities.with_state``,
    # ``derived``: ``cost.board_marks``, ``regions.markers_at``); the slots change only through set_slot,
    # which forgets it.
    _by_hook: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    # -- reading ------------------------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        return load_board(self.board_name)

    @property
    def over(self) -> bool:
        return self.phase == OVER

    def troop(self, seat: int, race: str) -> Troop | None:
        return self.players[seat].troop_of(race)

    def regions_of(self, seat: int, race: str) -> list[int]:
        """The regions ``seat``'s ``race`` holds, in ascending order (a new list)."""
        index = self._held
        if index is None:
            holdings = self._holdings
            if holdings is None:
                return [i for i, r in enumerate(self.regions) if r.owner == seat and r.race == race]
            held = holdings.get((seat, race))
            if held is None:
                held = [i for i, r in enumerate(self.regions) if r.owner == seat and r.race == race]
                holdings[(seat, race)] = held
            return list(held)
        held = index.get((seat, race), _NONE)
        edited = self._edited
        if not edited:
            return list(held)
        # During an edit the index is that of the state forked from: a region not edited since is the very
        # object it was then (copy on write: regions change only through edit_region); an edited one may
        # have changed hands, even after the question, through the RegionState edit_region returned.
        out = [i for i in held if i not in edited]
        regions = self.regions
        out += [i for i in edited if regions[i].owner == seat and regions[i].race == race]
        out.sort()
        return out

    def reading(self) -> _Reading:
        """``with state.reading(): …`` while nothing changes the state (``legal_actions``): ``regions_of``
        remembers its answers instead of scanning the regions for each question."""
        return _Reading(self)

    def derived(self, key: str, work_out: Callable[[GameState], T]) -> T:
        """``work_out(self)``, worked out once and kept under ``key`` until a slot is written (``_by_hook``):
        for what the abilities' slots alone decide, such as the markers on the board."""
        cache = self._by_hook
        if cache is None:
            cache = self._by_hook = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = work_out(self)
        return found

    # -- copy on write ------------------------------------------------------------------------------------
    def fork(self, indexed: bool = False) -> GameState:
        """A shallow copy whose containers may be replaced but whose items must be edited via ``edit_*``.

        The copy carries the holdings index (``regions_of``) of a state that has one, or, ``indexed``, of
        any state (``apply`` asks for it: a state changed by hand is scanned once here).
        """
        index = self._held
        if self._edited:
            index = None  # an edit under way: the index is that of the state before it
        if index is None and indexed:
            index = _index(self.regions)
        # Slot by slot on a bare instance (twice as fast as the dataclass __init__; once a step). The
        # column, the stacks and the defenders are shared until an edit changes them (edit_stacks; the
        # defenders are only ever replaced).
        new = _new_state(GameState)
        new.board_name = self.board_name
        new.turns = self.turns
        new.turn = self.turn
        new.current = self.current
        new.phase = self.phase
        new.players = list(self.players)
        new.regions = list(self.regions)
        new.combos = self.combos
        new.race_stack = self.race_stack
        new.power_stack = self.power_stack
        new.power_discard = self.power_discard
        new.rng = self.rng
        new.t = self.t
        new.options = self.options
        new.defenders = self.defenders
        new.last = self.last
        new.abilities = self.abilities
        new.designs = self.designs  # never changed after setup: shared
        new._owned = set()
        new._holdings = None
        new._held = index
        new._edited = {}
        new._by_hook = self._by_hook
        return new

    def edit_stacks(self) -> None:
        """Before changing the column of combos, the stacks or the discards in place: copy them once per
        edit (a fork shares them with the state before it)."""
        if "s" not in self._owned:
            self.combos = list(self.combos)
            self.race_stack = list(self.race_stack)
            self.power_stack = list(self.power_stack)
            self.power_discard = list(self.power_discard)
            self._owned.add("s")

    def edit_region(self, i: int) -> RegionState:
        # The regions edited since fork are those in _edited (each copied once, at its first edit).
        edited = self._edited
        if i not in edited:
            r = self.regions[i]
            edited[i] = (r.owner, r.race)
            self.regions[i] = r = r.copy()
            return r
        return self.regions[i]

    def edit_player(self, seat: int) -> PlayerState:
        key = ~seat  # the players' keys in _owned: -1, -2… (an int, cheaper than a tuple)
        if key not in self._owned:
            self.players[seat] = player = self.players[seat].copy()
            self._owned.add(key)
            return player
        return self.players[seat]

    def edit_troop(self, seat: int, race: str) -> Troop:
        troop = self.edit_player(seat).troop_of(race)
        assert troop is not None, f"seat {seat} holds no {race}"
        return troop

    def edit_turn(self) -> TurnState:
        if "t" not in self._owned:
            self.t = self.t.copy()
            self._owned.add("t")
        return self.t

    def set_slot(self, name: str, value: Any) -> None:
        """Replace the state of the race or power ``name`` (None: remove it). Copy on write: the dict is
        copied once per edit, the slots themselves are immutable."""
        self._by_hook = None
        if "a" not in self._owned:
            self.abilities = dict(self.abilities)
            self._owned.add("a")
        if value is None:
            self.abilities.pop(name, None)
        else:
            self.abilities[name] = value

    def edit_combo(self, i: int) -> Combo:
        key = ("c", i)
        if key not in self._owned:
            self.edit_stacks()
            self.combos[i] = self.combos[i].copy()
            self._owned.add(key)
        return self.combos[i]

    def done(self) -> GameState:
        """End an edit: the result may now be shared."""
        self._owned = set()
        self._holdings = None
        edited = self._edited
        if edited:
            if self._held is not None:
                self._held = _moved(self._held, edited, self.regions)
            self._edited = {}
        return self

    # -- JSON ---------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The versioned JSON form (``rules/README.md``). ``rules.read_state(s.to_json()) == s``: reading is
        ``rules.schema``'s, as checking a state needs the races and powers, which build on the state."""
        out = {
            "schema": SCHEMA_VERSION,
            "board": self.board_name,
            "turns": self.turns,
            "turn": self.turn,
            "current": self.current,
            "phase": self.phase,
            "options": dict(self.options),
            "players": [_player_json(p) for p in self.players],
            "regions": [_region_json(r) for r in self.regions],
            "abilities": {name: slot.to_json() for name, slot in self.abilities.items()},
            "combos": [[c.race, c.power, c.coins] for c in self.combos],
            "race_stack": list(self.race_stack),
            "power_stack": list(self.power_stack),
            "power_discard": list(self.power_discard),
            "rng": format(self.rng, "016x"),
            "turn_state": self.t.to_json(),
            "defenders": list(self.defenders),
            "last": dict(self.last),
        }
        if self.designs:  # only a game with the host's own race or power has them (snapshots stay small)
            out["designs"] = deepcopy(self.designs)
        return out


# A bare instance of each, for the copies made slot by slot above: the class's own __new__, looked up once
# (object.__new__ for these, as a pure class inherits it; a class compiled by mypyc refuses object.__new__).
_new_region, _new_troop, _new_player, _new_turn, _new_state = (
    RegionState.__new__,
    Troop.__new__,
    PlayerState.__new__,
    TurnState.__new__,
    GameState.__new__,
)


class _Reading:
    __slots__ = ("state", "outer")

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.outer = state._holdings is not None  # a nested call: the outer one clears the answers

    def __enter__(self) -> GameState:
        if not self.outer:
            self.state._holdings = {}
        return self.state

    def __exit__(self, *exc: object) -> None:
        if not self.outer:
            self.state._holdings = None


_NONE: list[int] = []


def _index(regions: list[RegionState]) -> dict[tuple[int, str | None], list[int]]:
    """The holdings index of these regions (``GameState._held``)."""
    index: dict[tuple[int, str | None], list[int]] = {}
    for i, r in enumerate(regions):
        key = (r.owner, r.race)
        found = index.get(key)
        if found is None:
            index[key] = [i]
        else:
            found.append(i)
    return index


def _moved(
    index: dict[tuple[int, str | None], list[int]],
    edited: dict[int, tuple[int, str | None]],
    regions: list[RegionState],
) -> dict[tuple[int, str | None], list[int]]:
    """``index`` (left unchanged) brought up to date with the regions ``edited``: each was under its
    (owner, race) before the edit and is now under that of ``regions[i]``."""
    out = None
    for i, before in edited.items():
        r = regions[i]
        if r.owner == before[0] and r.race == before[1]:
            continue  # the tokens alone changed (most edits)
        after = (r.owner, r.race)
        if out is None:
            out = dict(index)
        left = list(out.get(before, _NONE))
        try:
            left.remove(i)
        except ValueError:
            # Not where the index had it: the state forked from was changed by hand after it was indexed
            # (not through fork/edit/done). Scan this one rather than carry a wrong answer on.
            return _index(regions)
        if left:
            out[before] = left
        else:
            del out[before]
        there = out.get(after)
        if there is None:
            out[after] = [i]
        else:
            there = list(there)
            insort(there, i)
            out[after] = there
    return index if out is None else out


def _region_json(r: RegionState) -> dict[str, Any]:
    """Fields that differ from their default only, to keep snapshots small (ARCHITECTURE §8: < 16 KB)."""
    out: dict[str, Any] = {}
    if r.owner != -1:
        out["owner"] = r.owner
    if r.race is not None:
        out["race"] = r.race
    if r.tokens:
        out["tokens"] = r.tokens
    if r.mountain:
        out["mountain"] = True
    return out


def _troop_json(t: Troop) -> dict[str, Any]:
    out: dict[str, Any] = {"race": t.race, "power": t.power}
    if t.declined:
        out["declined"] = True
    if t.hand:
        out["hand"] = t.hand
    if t.picked_turn:
        out["picked_turn"] = t.picked_turn
    return out


def _player_json(p: PlayerState) -> dict[str, Any]:
    out: dict[str, Any] = {"coins": p.coins}
    if p.active is not None:
        out["active"] = _troop_json(p.active)
    if p.declined:
        out["declined"] = [_troop_json(t) for t in p.declined]
    if p.auto_passes:
        out["auto_passes"] = p.auto_passes
    return out
