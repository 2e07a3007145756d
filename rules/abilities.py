"""Races and special powers: what one is, the hooks the engine calls, and the registry (ARCHITECTURE §3).

A race or power is one module (``rules/races/<name>.py``, ``rules/powers/<name>.py``) holding everything
about it: its hooks, its own state, its action kinds, its description for players and how its steps are
told. The engine knows only the base game and calls the hooks at defined moments; an ability overrides
only what it changes. Unless said otherwise a hook applies only while the troop is Active (rulebook, "The
Races and Special Powers": benefits "no longer apply once the race is put In Decline"); the few benefits
that persist In Decline are flags the engine reads for declined troops too (``scores_in_decline``,
``conquers_in_decline``, ``sails``…), and the markers an ability left on the board act through its state.

An ability's own state lives in two slots keyed by its name, absent while unused (``rules/README.md``):
``state.abilities[name]`` (markers on the board, what its troop keeps aside) and
``state.t.abilities[name]`` (this turn only). Each is a :class:`Slot`: a small frozen value, replaced,
never changed, so states share it until an ability writes a new one (copy on write).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import MISSING, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

from .actions import ActionKind, Verb, add_kind, remove_kind
from .components import POWER_TOKENS, RACE_TOKENS

if TYPE_CHECKING:
    from _typeshed import IdentityFunction

    from .actions import Action
    from .state import GameState, Troop
    from .telling import Step, Told

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # installed with mypy, for development; the service runs without it

    def mypyc_attr(*attrs: str, **kwattrs: object) -> IdentityFunction:
        """Read only by mypyc, which compiles the optional build (``make compiled``): no effect here."""
        return lambda cls: cls


# -- an ability's own state ---------------------------------------------------------------------------------
# Races, powers and their slots are subclassed outside the package too (a test's new power), and a compiled
# build (mypyc) must compare slots by their dataclass __eq__, not by identity: both need this mark.
@mypyc_attr(allow_interpreted_subclasses=True)
class Slot:
    """An ability's own state: subclass as ``@dataclass(frozen=True, slots=True)`` with a default for every
    field. Field values: ``bool``, ``int``, ``int | None`` (default ``None``), ``frozenset[int]`` or
    ``tuple[int, ...]``. The JSON form holds the fields that differ from their default, sets and tuples as
    lists (sets sorted)."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, default in slot_fields(type(self)):
            value = getattr(self, name)
            if value != default:
                if isinstance(value, frozenset):
                    value = sorted(value)
                elif isinstance(value, tuple):
                    value = list(value)
                out[name] = value
        return out

    @classmethod
    def from_json(cls, data: Any, where: str) -> Self:
        """Read the JSON form, refusing anything else with a ValueError naming the field (``where``)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, not {data!r}")
        known = dict(slot_fields(cls))
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise ValueError(f"{where}.{key}: unknown field (known: {', '.join(sorted(known))})")
            values[key] = _decode(value, known[key], f"{where}.{key}")
        return cls(**values)


S = TypeVar("S", bound=Slot)
_SLOT_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {}
_EMPTY: dict[type, Slot] = {}


def slot_fields(cls: type[Slot]) -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` of a slot type's fields, worked out once per type."""
    known = _SLOT_FIELDS.get(cls)
    if known is None:
        out = []
        for f in fields(cls):  # type: ignore[arg-type]
            assert f.default is not MISSING, f"{cls.__name__}.{f.name} needs a default"
            out.append((f.name, f.default))
        known = _SLOT_FIELDS[cls] = tuple(out)
    return known


def empty(cls: type[S]) -> S:
    """The slot with every field at its default (an unused ability's state)."""
    found = _EMPTY.get(cls)
    if found is None:
        found = _EMPTY[cls] = cls()
    return found  # type: ignore[return-value]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _decode(value: Any, default: Any, where: str) -> Any:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, not {value!r}")
        return value
    if default is None or _is_int(default):
        if not _is_int(value):
            raise ValueError(f"{where}: expected an integer, not {value!r}")
        return value
    if isinstance(default, frozenset | tuple):
        if not isinstance(value, list) or not all(_is_int(v) for v in value):
            raise ValueError(f"{where}: expected a list of integers, not {value!r}")
        if isinstance(default, frozenset):
            if len(set(value)) != len(value):
                raise ValueError(f"{where}: a region is listed twice")
            return frozenset(value)
        return tuple(value)
    raise AssertionError(f"{where}: a slot field of an unsupported kind")  # pragma: no cover


# -- markers on regions -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Marker:
    """A piece an ability puts on regions (components.md, "Other pieces")."""

    #: Its key in :func:`rules.region_markers` and in each region of :func:`rules.player_view`.
    name: str
    #: In words, singular ("Troll's Lair"): the label of its part of a conquest's cost.
    label: str
    #: Tokens each adds to the defence of its region (rulebook, "Conquering a Region").
    defence: int = 0
    #: What makes the region immune in words ("the Dragon"), or "" (rulings: immune to conquest and to
    #: every racial and special power).
    immune: str = ""
    #: Counts as a token beside a lone one, so that token is not alone (rulebook, "Bivouacking").
    guards: bool = False
    #: Several may lie on one region: a count in the JSON and the views, else a flag (true).
    counted: bool = False


# -- the ability ----------------------------------------------------------------------------------------
@mypyc_attr(allow_interpreted_subclasses=True)
class Ability:
    name: ClassVar[str] = ""
    #: Tokens on the banner or badge, when they are not the box's count for its name (components.md,
    #: ``rules.components``): read them with :meth:`given_tokens`.
    tokens: ClassVar[int | None] = None
    #: One line for the combo table ("+1 coin per Mine region, even In Decline.").
    summary: ClassVar[str] = ""
    #: The rulebook's paragraph, for players (plain text), and where it comes from when that is not the
    #: rulebook's paragraph of its name (:meth:`cited`).
    description: ClassVar[str] = ""
    source: ClassVar[str] = ""
    #: The type of its own state in the game (``state.abilities[name]``), and of its state for the current
    #: turn (``state.t.abilities[name]``, dropped when the turn passes); None: it keeps none.
    slot: ClassVar[type[Slot] | None] = None
    turn_slot: ClassVar[type[Slot] | None] = None
    #: The markers it puts on regions (they act through its ``slot``: :meth:`placed`).
    markers: ClassVar[tuple[Marker, ...]] = ()
    #: For an ability whose one marker stands at most once in each region of a set (a Troll's Lair, a
    #: Fortress, a Hero, a Hole-in-the-Ground): the field of its ``slot`` that holds those regions, a
    #: ``frozenset[int]``, which :meth:`placed` and :meth:`place` then read and write. Empty for any other
    #: ability, whose markers are its own business.
    marker_regions: ClassVar[str] = ""
    #: The action kinds it adds, handled by :meth:`apply` and told by :meth:`tell`.
    actions: ClassVar[tuple[ActionKind, ...]] = ()
    #: The words a player writes in a mail to take its :attr:`actions` (``rules.orders``): e.g.
    #: ``Verb("dragon", "dragon", "region")`` reads "dragon 12".
    verbs: ClassVar[tuple[Verb, ...]] = ()
    #: Schema 1 kept some of an ability's state in the core records: the fields it read there
    #: (:meth:`upgrade_schema_1` moves them into its slots).
    schema_1_fields: ClassVar[frozenset[str]] = frozenset()

    # -- flags ----------------------------------------------------------------------------------------------
    #: First conquest on any region it may conquer, not only a border one (rulings).
    enters_anywhere: ClassVar[bool] = False
    #: Conquests need not be adjacent; never Seas or the Lake.
    flies: ClassVar[bool] = False
    #: May conquer Seas and the Lake; kept and scored In Decline.
    sails: ClassVar[bool] = False
    #: When conquered, all tokens return to hand, none discarded.
    keeps_tokens_when_conquered: ClassVar[bool] = False
    #: All tokens stay on the map going In Decline.
    keeps_all_in_decline: ClassVar[bool] = False
    #: In Decline tokens go on conquering (then the ``declined_*`` hooks below apply In Decline).
    conquers_in_decline: ClassVar[bool] = False
    #: Counts toward the one-race-In-Decline limit.
    counts_toward_decline_limit: ClassVar[bool] = True
    #: The race's scoring bonus persists In Decline.
    scores_in_decline: ClassVar[bool] = False
    #: May go In Decline at the end of a turn of conquests, after scoring.
    declines_after_scoring: ClassVar[bool] = False
    #: Made from a design of the host's (``rules/designs.py``), not from the box: a new game deals it only
    #: when the host added it (official games deal every other registered race and power).
    designed: ClassVar[bool] = False
    #: The name players read, when it is not :attr:`name`: a design's own, without the fingerprint its name
    #: in the game carries (:func:`shown`).
    title: ClassVar[str] = ""

    # -- its own state --------------------------------------------------------------------------------------
    def read(self, state: GameState, kind: type[S]) -> S:
        """Its game slot (``kind`` is :attr:`slot`), or the empty one while unused."""
        value = state.abilities.get(self.name)
        if value is not None:
            return value
        found = _EMPTY.get(kind)
        return found if found is not None else empty(kind)  # type: ignore[return-value]

    def write(self, state: GameState, value: Slot) -> None:
        """Replace its game slot (state is an edit in progress); an empty one is removed."""
        state.set_slot(self.name, None if value == empty(type(value)) else value)

    def read_turn(self, state: GameState, kind: type[S]) -> S:
        """Its slot for this turn (``kind`` is :attr:`turn_slot`), or the empty one."""
        value = state.t.abilities.get(self.name)
        if value is not None:
            return value
        found = _EMPTY.get(kind)
        return found if found is not None else empty(kind)  # type: ignore[return-value]

    def write_turn(self, state: GameState, value: Slot) -> None:
        turn = state.edit_turn().abilities
        if value == empty(type(value)):
            turn.pop(self.name, None)
        else:
            turn[self.name] = value

    # -- conquests -------------------------------------------------------------------------------------------
    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        """Tokens fewer to conquer ``region`` (the cost stays at least 1)."""
        return 0

    def pending_roll(self, state: GameState, seat: int, troop: Troop) -> int | None:
        """A reinforcement die rolled before naming the next conquest, waiting to be used, or None. The
        next conquest costs that many tokens fewer, is offered whatever it costs, and one the hand cannot
        pay fails and ends the conquests (it was the final attempt)."""
        return None

    def reaches(self, state: GameState, seat: int, troop: Troop, region: int, held: list[int]) -> bool:
        """Whether ``region`` counts as adjacent for conquest beyond the board's borders."""
        return False

    def reachable(self, state: GameState, seat: int, troop: Troop, held: list[int]) -> Iterable[int] | None:
        """The regions :meth:`reaches` may accept (at least all those it does), so that ``legal_actions``
        checks only those; ``None``: any region. An ability that overrides ``reaches`` and not this is
        asked about every region."""
        return () if type(self).reaches is Ability.reaches else None

    def entry(self, state: GameState, seat: int, troop: Troop) -> Iterable[int]:
        """Regions beyond the border on which the troop's first conquest may also be made (a design that
        enters by a terrain: ``rules/designs.py``); water still only for a troop that sails."""
        return ()

    def refuse(self, state: GameState, seat: int, action: Action) -> str | None:
        """Why ``action`` may not be taken now, or None: a veto asked of the acting player's Active
        abilities and, on the player's own turn, of every ability with state for this turn. ``apply``
        refuses what it vetoes and ``legal_actions`` leaves it out."""
        return None

    def on_pick(self, state: GameState, seat: int, troop: Troop) -> None:
        """When the combo is picked."""

    def on_ready(self, state: GameState, seat: int, troop: Troop) -> None:
        """When troops are readied at the start of the turn's conquests."""

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        """After ``region`` was conquered (state is an edit in progress)."""

    def on_conquests_end(self, state: GameState, seat: int, troop: Troop) -> None:
        """When the conquests end and redeployment begins."""

    # -- In Decline conquests (``conquers_in_decline``; asked of the In Decline troop) -------------------------
    def declined_refusal(self, state: GameState, seat: int, troop: Troop) -> str | None:
        """Why the In Decline troop may not conquer now, or None."""
        return "In Decline races conquer no more"

    def ready_declined(self, state: GameState, seat: int, troop: Troop) -> None:
        """Ready the In Decline troop for its conquests (once a turn)."""

    def declined_readied(self, state: GameState) -> bool:
        """Whether the In Decline troop was readied this turn (it conquered: it redeploys)."""
        return False

    def end_declined_conquests(self, state: GameState, seat: int, troop: Troop) -> None:
        """The In Decline troop's conquests are over for this turn: its final conquest was tried, or the
        Active race began conquering."""

    # -- tokens ----------------------------------------------------------------------------------------------
    def aside(self, state: GameState, troop: Troop) -> int:
        """Tokens off the board and not in hand, which count against the box and come back in hand when
        troops are readied."""
        return 0

    def kept_off_board(self, state: GameState, seat: int, troop: Troop) -> int:
        """Tokens in hand the troop keeps off the board after its own redeployment."""
        return 0

    def on_auto_redeploy(self, state: GameState, seat: int, troop: Troop) -> None:
        """The ``auto`` rule (ARCHITECTURE §4) for the ability's own pieces, after the tokens."""

    def waiting_pieces(self, state: GameState, seat: int, troop: Troop) -> int:
        """Pieces of its own off the board that the owner places again after an attack: in ``ask`` mode they
        give the attacked player a redeploy step even with no token in hand (ARCHITECTURE §4), where the
        ability's kinds marked ``defends`` place them; those left when the step ends are placed by
        :meth:`on_auto_redeploy`."""
        return 0

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        """After the owner's redeployment, before scoring."""

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        """The troop goes In Decline: take away what does not survive it."""

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        """Bonus coins at the end of the owner's turn; ``regions`` are the troop's regions."""
        return 0

    # -- its markers (asked whenever its game slot is present, whoever holds it) ------------------------------
    def placed(self, state: GameState) -> Iterable[tuple[int, Marker, int]]:
        """Its markers on the board: ``(region, marker, count)``; by default its marker once in each region of
        its :attr:`marker_regions`."""
        if not self.marker_regions:
            return ()
        assert self.slot is not None
        regions: frozenset[int] = getattr(self.read(state, self.slot), self.marker_regions)
        return [(region, self.markers[0], 1) for region in regions]

    def place(self, state: GameState, region: int, marker: Marker, count: int) -> None:
        """Set how many of ``marker`` lie on ``region`` (0: none); for setting up states (tests, schema 1). By
        default, adds ``region`` to its :attr:`marker_regions` or takes it out."""
        if not self.marker_regions:
            raise NotImplementedError(f"{self.name} places no {marker.name}")
        assert self.slot is not None
        slot = self.read(state, self.slot)
        regions: frozenset[int] = getattr(slot, self.marker_regions)
        changed = regions | {region} if count else regions - {region}
        self.write(state, replace(slot, **{self.marker_regions: changed}))  # type: ignore[type-var]

    def on_vacate(self, state: GameState, region: int, owner: int, race: str | None) -> None:
        """The occupant leaves ``region`` (conquered, abandoned, emptied, vanished): by default the ability's
        markers there leave with it (rulebook: a Lair or a Fortress is removed "if you abandon the Region or
        when an enemy conquers it")."""
        for where, marker, _ in list(self.placed(state)):
            if where == region:
                self.place(state, region, marker, 0)

    def on_turn_end(self, state: GameState) -> None:
        """The turn on turn ends, after its player's own ``on_end_turn``, before defenders redeploy."""

    def on_turn_start(self, state: GameState) -> None:
        """The next player's turn begins (``state.current`` is that player)."""

    def shield(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        """Why ``seat``'s ``troop`` may not conquer ``region`` because of this ability's state (a peace), or
        None; asked before adjacency, after immunity and water."""
        return None

    def check(self, state: GameState) -> None:
        """Raise a ValueError naming the field (``abilities.<name>…``) when its state does not fit the game
        (``rules.read_state``); the types and the markers' regions are checked already."""

    # -- its own actions ---------------------------------------------------------------------------------------
    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        """The extra actions this ability offers now."""
        return []

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any] | None:
        """Carry out one of :attr:`actions` (state is an edit in progress); raise IllegalAction.

        May return what to add to the step's ``last`` (the die, an undo point)."""
        raise NotImplementedError(action.type)

    # -- telling ------------------------------------------------------------------------------------------------
    def tell(self, step: Step) -> Told:
        """One applied step of one of :attr:`actions`: what the player did, without their name ("built a
        Fortress on Hill 4"; ``rules.telling`` puts the name before it, or joins it to the rest of the turn).
        Public facts only; a :class:`rules.telling.Phrase` lets steps of the same verb read as one, and
        ``step.brief`` asks for the short form a turn's sentence uses ("" leaves the step out)."""
        return step.kind.replace("_", " ")

    def note(self, step: Step) -> str | None:
        """What the ability added to a step of the base game its troop took, in a few words, or None
        (``rules.telling`` puts it in brackets after the step's sentence)."""
        return None

    # -- schema 1 ------------------------------------------------------------------------------------------------
    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        """Fill its slots from a schema-1 state's JSON (``old``; its :attr:`schema_1_fields`)."""

    def given_tokens(self) -> int:
        """Tokens on its banner or badge: its own :attr:`tokens`, else the box's count for its name."""
        return self.tokens or 0

    def cited(self) -> str:
        """Where its :attr:`description` comes from: its :attr:`source`, else the rulebook's paragraph of its
        name (as for every race and power of the box)."""
        return self.source or f'Rulebook, "{self.name}"'

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


@mypyc_attr(allow_interpreted_subclasses=True)
class Race(Ability):
    #: Tokens of the race in the box, the hard cap (components.md, "Race banners"), when they are not the
    #: box's count for its name: read them with :meth:`box_tokens`.
    box: ClassVar[int | None] = None

    def given_tokens(self) -> int:
        return self.tokens if self.tokens is not None else RACE_TOKENS[self.name][0]

    def box_tokens(self) -> int:
        """Tokens of the race in the box, the hard cap: its own :attr:`box`, else the box's count."""
        return self.box if self.box is not None else RACE_TOKENS[self.name][1]


@mypyc_attr(allow_interpreted_subclasses=True)
class Power(Ability):
    def given_tokens(self) -> int:
        return self.tokens if self.tokens is not None else POWER_TOKENS[self.name]


# -- the registry --------------------------------------------------------------------------------------------
RACES: dict[str, Race] = {}
POWERS: dict[str, Power] = {}
#: Races and powers by name.
ABILITIES: dict[str, Ability] = {}
#: action type -> the race or power that handles it.
ACTION_OWNERS: dict[str, Ability] = {}
#: word -> a race's or power's verb for orders by mail (``rules.orders``).
VERBS: dict[str, Verb] = {}
#: marker name -> (the ability that places it, the marker).
MARKERS: dict[str, tuple[Ability, Marker]] = {}
#: name -> its place in the registry (races first, then powers, as registered): an order that does not
#: depend on the order a state's slots were written in.
RANK: dict[str, int] = {}

#: The hooks and flags :class:`Hooks` knows (every hook of :class:`Ability` a troop's abilities answer).
HOOKS = (
    "conquest_discount",
    "pending_roll",
    "reaches",
    "entry",
    "refuse",
    "on_pick",
    "on_ready",
    "on_conquer",
    "on_conquests_end",
    "aside",
    "kept_off_board",
    "on_auto_redeploy",
    "waiting_pieces",
    "on_end_turn",
    "on_decline",
    "score",
    "legal",
    "note",
)
FLAGS = (
    "enters_anywhere",
    "flies",
    "sails",
    "keeps_tokens_when_conquered",
    "keeps_all_in_decline",
    "conquers_in_decline",
    "counts_toward_decline_limit",
    "scores_in_decline",
    "declines_after_scoring",
)


def register(cls: type[Ability]) -> type[Ability]:
    """Make a race or power known to the engine (its action kinds and markers too): ``register(Fortified)``
    after its class. A call, not a class decorator, which would keep mypyc from compiling the class
    (``make compiled``)."""
    instance = cls()
    table: dict = RACES if isinstance(instance, Race) else POWERS
    assert instance.name and instance.name not in ABILITIES, instance.name
    table[instance.name] = instance
    ABILITIES[instance.name] = instance
    RANK[instance.name] = len(RANK) + (0 if isinstance(instance, Race) else 1000)
    for kind in instance.actions:
        add_kind(kind)
        ACTION_OWNERS[kind.type] = instance
    for verb in instance.verbs:
        assert verb.word not in VERBS, f"the verb {verb.word!r} is already known"
        assert verb.action in {kind.type for kind in instance.actions}, f"{verb.word!r}: not one of its actions"
        VERBS[verb.word] = verb
    for marker in instance.markers:
        assert marker.name not in MARKERS, marker.name
        MARKERS[marker.name] = (instance, marker)
    if instance.marker_regions:
        assert len(instance.markers) == 1 and instance.slot is not None, f"{instance.name}: one marker, in its slot"
        assert dict(slot_fields(instance.slot)).get(instance.marker_regions) == frozenset(), instance.marker_regions
    _COMBOS.clear()
    _OVERRIDING.clear()
    _NAMES_WITH.clear()
    return cls


def unregister(name: str) -> None:
    """Forget a race or power again (:func:`registered`)."""
    instance = ABILITIES.pop(name)
    del RANK[name]
    RACES.pop(name, None)
    POWERS.pop(name, None)
    for kind in instance.actions:
        remove_kind(kind.type)
        del ACTION_OWNERS[kind.type]
    for verb in instance.verbs:
        del VERBS[verb.word]
    for marker in instance.markers:
        del MARKERS[marker.name]
    _COMBOS.clear()
    _OVERRIDING.clear()
    _NAMES_WITH.clear()


@contextlib.contextmanager
def registered(*classes: type[Ability]) -> Iterator[None]:
    """``with registered(Foresters): …``: these races or powers are known inside the block only (new games
    deal them), e.g. in a test."""
    done: list[str] = []
    try:
        for cls in classes:
            register(cls)
            done.append(cls.name)
        yield
    finally:
        for name in reversed(done):
            unregister(name)


# -- which abilities apply ----------------------------------------------------------------------------------
def overrides(ability: Ability, hook: str) -> bool:
    """Whether ``ability`` overrides the hook ``hook`` (an :class:`Ability` method)."""
    return getattr(type(ability), hook) is not getattr(Ability, hook)


def abilities(troop: Troop) -> tuple[Ability, ...]:
    """The race and power whose benefits apply now: none once In Decline (rulebook, "The Races…")."""
    if troop.declined:
        return ()
    return (RACES[troop.race], POWERS[troop.power])


class Hooks:
    """What a troop's race and power change, worked out once per combo (:func:`hooks_of`): for each hook
    the abilities that override it, for each flag whether one sets it. The engine calls only those, not the
    do-nothing defaults of the others; an In Decline troop has none (see the module's docstring)."""

    conquest_discount: tuple[Ability, ...]
    pending_roll: tuple[Ability, ...]
    reaches: tuple[Ability, ...]
    entry: tuple[Ability, ...]
    refuse: tuple[Ability, ...]
    on_pick: tuple[Ability, ...]
    on_ready: tuple[Ability, ...]
    on_conquer: tuple[Ability, ...]
    on_conquests_end: tuple[Ability, ...]
    aside: tuple[Ability, ...]
    kept_off_board: tuple[Ability, ...]
    on_auto_redeploy: tuple[Ability, ...]
    waiting_pieces: tuple[Ability, ...]
    on_end_turn: tuple[Ability, ...]
    on_decline: tuple[Ability, ...]
    score: tuple[Ability, ...]
    legal: tuple[Ability, ...]
    note: tuple[Ability, ...]
    enters_anywhere: bool
    flies: bool
    sails: bool
    keeps_tokens_when_conquered: bool
    keeps_all_in_decline: bool
    conquers_in_decline: bool
    counts_toward_decline_limit: bool
    scores_in_decline: bool
    declines_after_scoring: bool

    def __init__(self, pair: tuple[Ability, ...]) -> None:
        own = [_overridden(a) for a in pair]
        for hook in HOOKS:
            setattr(self, hook, tuple(a for a, hooks in zip(pair, own, strict=True) if hook in hooks))
        for flag in FLAGS:
            setattr(self, flag, any(getattr(a, flag) for a in pair))


_OVERRIDDEN: dict[type, frozenset[str]] = {}


def _overridden(ability: Ability) -> frozenset[str]:
    """The :data:`HOOKS` an ability overrides, worked out once per class."""
    found = _OVERRIDDEN.get(type(ability))
    if found is None:
        found = _OVERRIDDEN[type(ability)] = frozenset(hook for hook in HOOKS if overrides(ability, hook))
    return found


_COMBOS: dict[str, dict[str, Hooks]] = {}  # race -> power -> Hooks
NO_HOOKS: Hooks


def hooks_of(troop: Troop) -> Hooks:
    """The :class:`Hooks` of the troop's race and power (none In Decline)."""
    if troop.declined:
        return NO_HOOKS
    found: Hooks | None = troop.hooks
    if found is not None:
        return found
    troop.hooks = found = _hooks_of(troop.race, troop.power)
    return found


def _hooks_of(race: str, power: str) -> Hooks:
    by_power = _COMBOS.get(race)
    if by_power is None:
        by_power = _COMBOS[race] = {}
    found = by_power.get(power)
    if found is None:
        found = by_power[power] = Hooks((RACES[race], POWERS[power]))
    return found


def hooked(troop: Troop, hook: str) -> tuple[Ability, ...]:
    """The troop's :func:`abilities` that override ``hook`` (an :class:`Ability` method)."""
    found: tuple[Ability, ...] = getattr(hooks_of(troop), hook)
    return found


def has_flag(troop: Troop, flag: str) -> bool:
    """Whether the race or the power of the troop, while Active, sets ``flag`` (``sails``, ``flies``…)."""
    found: bool = getattr(hooks_of(troop), flag)
    return found


NO_HOOKS = Hooks(())
_OVERRIDING: dict[str, frozenset[str]] = {}


def overriding(hook: str) -> frozenset[str]:
    """The names of the registered abilities that override ``hook`` (for ``on_vacate``: also those with
    markers, which its default takes away)."""
    found = _OVERRIDING.get(hook)
    if found is None:
        found = _OVERRIDING[hook] = frozenset(
            name for name, a in ABILITIES.items() if overrides(a, hook) or (hook == "on_vacate" and a.markers)
        )
    return found


def with_state(state: GameState, hook: str) -> tuple[Ability, ...]:
    """The abilities with a game slot in ``state`` that override ``hook``, in the registry's order (worked
    out once per state and hook: ``GameState._by_hook``, forgotten when a slot is written)."""
    if not state.abilities:
        return ()
    cache = state._by_hook
    if cache is None:
        cache = state._by_hook = {}
    found = cache.get(hook)
    if found is None:
        names = overriding(hook).intersection(state.abilities)
        found = cache[hook] = tuple(ABILITIES[name] for name in sorted(names, key=RANK.__getitem__))
    return found


def with_turn_state(state: GameState, hook: str) -> list[Ability]:
    """The abilities with a slot for this turn that override ``hook``, in the registry's order."""
    if not state.t.abilities:
        return []
    names = overriding(hook).intersection(state.t.abilities)
    return [ABILITIES[name] for name in sorted(names, key=RANK.__getitem__)] if names else []


def shown(name: str) -> str:
    """A race or power as players read its name: a design's own ("Sky Pirates"), without the fingerprint of
    its name in the game ("Sky Pirates (3fa2c1)", ``rules/designs.py``); any other name as it is."""
    ability = ABILITIES.get(name)
    return ability.title if ability is not None and ability.title else name


_NAMES_WITH: dict[str, str] = {}


def names_with(flag: str) -> str:
    """The names of the races and powers that set ``flag``, for messages ("Seafaring", "Stout"); worked
    out once per flag (a conquest check's refusal of a Sea says it, region after region)."""
    found = _NAMES_WITH.get(flag)
    if found is None:
        found = _NAMES_WITH[flag] = (
            " or ".join(sorted(name for name, a in ABILITIES.items() if getattr(a, flag) and not a.designed)) or "no"
        )
    return found
