"""The game state: plain data, copied on write, with a versioned JSON form (see ``rules/README.md``).

:func:`rules.apply` never mutates the state it is given: it takes a shallow :meth:`GameState.fork` and
replaces each region, player or troop it touches with a copy first (``edit_region``, ``edit_player``…).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from .board import Board, load_board
from .components import RACE_TOKENS

SCHEMA_VERSION = 1
LOST_TRIBE = "Lost Tribe"

# Phases of a turn (DESIGN §4: a turn is a sequence of steps).
PICK = "pick"  # no Active race: pick a combo (In Decline Ghouls may conquer first)
START = "start"  # Active race on hand: go In Decline, or ready troops and conquer
CONQUER = "conquer"  # conquests under way
REDEPLOY = "redeploy"  # conquests over: redeploy, place markers, end the turn
DEFEND = "defend"  # ``ask`` mode: attacked players redeploy their tokens in hand
OVER = "over"

REDEPLOY_AUTO = "auto"
REDEPLOY_ASK = "ask"


@dataclass(slots=True)
class RegionState:
    """What lies on one region. ``owner`` is a seat, or -1 for nobody or the Lost Tribes."""

    owner: int = -1
    race: str | None = None
    tokens: int = 0
    mountain: bool = False
    lair: bool = False
    fortress: bool = False
    encampments: int = 0
    hole: bool = False
    hero: bool = False
    dragon: bool = False

    def copy(self) -> RegionState:
        return RegionState(
            self.owner,
            self.race,
            self.tokens,
            self.mountain,
            self.lair,
            self.fortress,
            self.encampments,
            self.hole,
            self.hero,
            self.dragon,
        )

    @property
    def immune(self) -> bool:
        """Rulings: Dragon, Heroes and Holes-in-the-Ground make a region immune to conquest and every power."""
        return self.dragon or self.hero or self.hole

    @property
    def occupied(self) -> bool:
        """Rulebook, "The Races and Special Powers": non-empty means a Lost Tribe or Race token is there."""
        return self.tokens > 0

    def clear_occupant(self) -> None:
        """The occupant leaves; markers that belong to it leave too (Lair, Fortress, power markers)."""
        self.owner = -1
        self.race = None
        self.tokens = 0
        self.lair = False
        self.fortress = False
        self.encampments = 0
        self.hole = False
        self.hero = False
        self.dragon = False


@dataclass(slots=True)
class Troop:
    """One Race banner and its Special Power badge held by a player, Active or In Decline."""

    race: str
    power: str
    declined: bool = False
    hand: int = 0  # tokens off the board, to be placed this turn (or after an attack)
    held: int = 0  # Amazons: the 4 tokens kept off the board until the next Ready your Troops
    picked_turn: int = 0  # the game turn the combo was picked (Wealthy, no decline on the pick turn)
    holes: int = 0  # Halflings: Holes-in-the-Ground placed so far (2 at most, ever)
    camps: int = 0  # Bivouacking: Encampments off the board, waiting to be placed

    def copy(self) -> Troop:
        return Troop(
            self.race,
            self.power,
            self.declined,
            self.hand,
            self.held,
            self.picked_turn,
            self.holes,
            self.camps,
        )


@dataclass(slots=True)
class PlayerState:
    coins: int
    active: Troop | None = None
    declined: list[Troop] = field(default_factory=list)
    ally: int | None = None  # Diplomat: the seat at peace with this player's Active race
    auto_passes: int = 0  # consecutive missed deadlines

    def copy(self) -> PlayerState:
        return PlayerState(
            self.coins,
            self.active.copy() if self.active else None,
            [t.copy() for t in self.declined],
            self.ally,
            self.auto_passes,
        )

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
    readied: bool = False
    ghouls_readied: bool = False
    ghouls_done: bool = False
    conquests: int = 0  # conquests by the Active race (incl. conversions and the Dragon)
    conquered: list[int] = field(default_factory=list)
    nonempty_conquered: int = 0
    attacked: list[int] = field(default_factory=list)  # seats whose Active race was attacked
    converted: list[int] = field(default_factory=list)  # Sorcerers: once per turn per opponent
    berserk_die: int | None = None
    dragon_used: bool = False
    fortress_placed: bool = False
    heroes_placed: bool = False
    skeletons_added: bool = False

    def copy(self) -> TurnState:
        return TurnState(
            self.picked,
            self.readied,
            self.ghouls_readied,
            self.ghouls_done,
            self.conquests,
            list(self.conquered),
            self.nonempty_conquered,
            list(self.attacked),
            list(self.converted),
            self.berserk_die,
            self.dragon_used,
            self.fortress_placed,
            self.heroes_placed,
            self.skeletons_added,
        )


@dataclass(slots=True)
class GameState:
    board_name: str
    turns: int
    turn: int
    current: int
    phase: str
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
    #: What the last step did: ``{"kind", "player", "undo_point", "die", "score"}`` (DESIGN §4, undo).
    last: dict[str, Any] = field(default_factory=dict)
    # Copy-on-write bookkeeping for apply(); never serialised.
    _owned: set = field(default_factory=set, repr=False, compare=False)
    # regions_of answers remembered, (seat, race) -> regions, while the state is read (``reading``) or
    # edited (from ``fork`` to ``done``; then the regions edited since, ``_edited``, are asked again).
    _holdings: dict[tuple[int, str | None], list[int]] | None = field(default=None, repr=False, compare=False)
    _edited: set[int] = field(default_factory=set, repr=False, compare=False)

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
        holdings = self._holdings
        if holdings is None:
            return [i for i, r in enumerate(self.regions) if r.owner == seat and r.race == race]
        held = holdings.get((seat, race))
        if held is None:
            held = [i for i, r in enumerate(self.regions) if r.owner == seat and r.race == race]
            holdings[(seat, race)] = held
        edited = self._edited
        if not edited:
            return list(held)
        # A region not edited since fork() is the very object it was when the answer was remembered
        # (copy on write: regions change only through edit_region); an edited one may have changed
        # hands, even after the answer, through the RegionState edit_region returned.
        out = [i for i in held if i not in edited]
        regions = self.regions
        out += [i for i in edited if regions[i].owner == seat and regions[i].race == race]
        out.sort()
        return out

    def reading(self) -> _Reading:
        """``with state.reading(): …`` while nothing changes the state (``legal_actions``): ``regions_of``
        remembers its answers instead of scanning the regions for each question."""
        return _Reading(self)

    def box_left(self, race: str) -> int:
        """Tokens of this race still in the box (Components: a player never gets more than the box holds)."""
        used = sum(r.tokens for r in self.regions if r.race == race)
        for p in self.players:
            troop = p.troop_of(race)
            if troop is not None:
                used += troop.hand + troop.held
        return RACE_TOKENS[race][1] - used

    # -- copy on write ------------------------------------------------------------------------------------
    def fork(self) -> GameState:
        """A shallow copy whose containers may be replaced but whose items must be edited via ``edit_*``."""
        return GameState(
            self.board_name,
            self.turns,
            self.turn,
            self.current,
            self.phase,
            list(self.players),
            list(self.regions),
            list(self.combos),
            list(self.race_stack),
            list(self.power_stack),
            list(self.power_discard),
            self.rng,
            self.t,
            self.options,
            list(self.defenders),
            self.last,
            set(),
            {},
            set(),
        )

    def edit_region(self, i: int) -> RegionState:
        key = ("r", i)
        if key not in self._owned:
            self.regions[i] = self.regions[i].copy()
            self._owned.add(key)
            self._edited.add(i)
        return self.regions[i]

    def edit_player(self, seat: int) -> PlayerState:
        key = ("p", seat)
        if key not in self._owned:
            self.players[seat] = self.players[seat].copy()
            self._owned.add(key)
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

    def edit_combo(self, i: int) -> Combo:
        key = ("c", i)
        if key not in self._owned:
            self.combos[i] = self.combos[i].copy()
            self._owned.add(key)
        return self.combos[i]

    def done(self) -> GameState:
        """End an edit: the result may now be shared."""
        self._owned = set()
        self._holdings = None
        self._edited = set()
        return self

    # -- JSON ---------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The versioned JSON form (``rules/README.md``). ``from_json(s.to_json()) == s``."""
        return {
            "schema": SCHEMA_VERSION,
            "board": self.board_name,
            "turns": self.turns,
            "turn": self.turn,
            "current": self.current,
            "phase": self.phase,
            "options": dict(self.options),
            "players": [_player_json(p) for p in self.players],
            "regions": [_region_json(r) for r in self.regions],
            "combos": [[c.race, c.power, c.coins] for c in self.combos],
            "race_stack": list(self.race_stack),
            "power_stack": list(self.power_stack),
            "power_discard": list(self.power_discard),
            "rng": format(self.rng, "016x"),
            "turn_state": _compact(self.t),
            "defenders": list(self.defenders),
            "last": dict(self.last),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameState:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            raise ValueError(f"Not a game state of schema {SCHEMA_VERSION}")
        t = TurnState(**data["turn_state"])
        t.conquered = list(t.conquered)
        t.attacked = list(t.attacked)
        t.converted = list(t.converted)
        return cls(
            board_name=data["board"],
            turns=data["turns"],
            turn=data["turn"],
            current=data["current"],
            phase=data["phase"],
            players=[_player_from(p) for p in data["players"]],
            regions=[_region_from(r) for r in data["regions"]],
            combos=[Combo(race, power, coins) for race, power, coins in data["combos"]],
            race_stack=list(data["race_stack"]),
            power_stack=list(data["power_stack"]),
            power_discard=list(data["power_discard"]),
            rng=int(data["rng"], 16),
            t=t,
            options=dict(data["options"]),
            defenders=list(data["defenders"]),
            last=dict(data["last"]),
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


def _compact(obj: Any) -> dict[str, Any]:
    """Fields that differ from their default only, to keep snapshots small (DESIGN §8: < 16 KB)."""
    out = {}
    for name, default in _defaults(type(obj)):
        value = getattr(obj, name)
        if value != default:
            out[name] = list(value) if isinstance(value, list) else value
    return out


_DEFAULTS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _defaults(cls: type) -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` of the fields that have a default (a Troop's race and power have none).

    Computed once per class: ``to_json`` runs after every step, and ``dataclasses.fields`` was most of
    its time.
    """
    known = _DEFAULTS.get(cls)
    if known is None:
        out = []
        for f in fields(cls):
            if f.default is not MISSING:
                out.append((f.name, f.default))
            elif f.default_factory is not MISSING:
                out.append((f.name, f.default_factory()))
        known = _DEFAULTS[cls] = tuple(out)
    return known


def _region_json(r: RegionState) -> dict[str, Any]:
    return _compact(r)


def _region_from(d: dict[str, Any]) -> RegionState:
    return RegionState(**d)


def _troop_json(t: Troop) -> dict[str, Any]:
    return {"race": t.race, "power": t.power} | _compact(t)


def _player_json(p: PlayerState) -> dict[str, Any]:
    out: dict[str, Any] = {"coins": p.coins}
    if p.active is not None:
        out["active"] = _troop_json(p.active)
    if p.declined:
        out["declined"] = [_troop_json(t) for t in p.declined]
    if p.ally is not None:
        out["ally"] = p.ally
    if p.auto_passes:
        out["auto_passes"] = p.auto_passes
    return out


def _player_from(d: dict[str, Any]) -> PlayerState:
    return PlayerState(
        coins=d["coins"],
        active=Troop(**d["active"]) if "active" in d else None,
        declined=[Troop(**t) for t in d.get("declined", [])],
        ally=d.get("ally"),
        auto_passes=d.get("auto_passes", 0),
    )
