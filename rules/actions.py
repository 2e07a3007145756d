"""Actions: small immutable value objects, and their JSON form.

Every step a player (or the deadline worker) takes is one :class:`Action`. Unknown or malformed JSON is
refused with :class:`IllegalAction`, like an illegal move, with a message a player can act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

ACTIVE = "active"
DECLINED = "declined"  # an In Decline race that still conquers, acting


@dataclass(frozen=True, slots=True)
class ActionKind:
    """One type of action: the fields its JSON takes (besides ``type`` and ``player``) and what it is.

    The engine's own kinds are :data:`BASE_KINDS`; a race or power adds its own (its ``actions``), which
    :func:`rules.abilities.register` puts in :data:`ACTION_KINDS`.
    """

    type: str
    fields: tuple[str, ...] = ()
    #: What a button or a form for it says ("Conquer", "Roll the die first").
    label: str = ""
    #: ``legal_actions`` offers a description of the choice rather than every choice (ARCHITECTURE §3):
    #: ``"spread"``: ``tokens``, up to ``count`` over ``regions``; ``"choose"``: ``count`` of ``regions``.
    choice: str | None = None
    #: The step conquers a region (a conquest by other means than the tokens' count).
    conquers: bool = False
    #: The step rolls the reinforcement die before a conquest.
    rolls: bool = False
    #: The marker the step places (``rules.region_markers`` name), so a page can show where they lie now.
    marker: str | None = None
    #: An attacked player takes it in their own redeploy step (``ask`` mode, ARCHITECTURE §4), not on their turn.
    defends: bool = False


#: What a :class:`Verb` takes after its word, in an order written by mail (``rules.orders``).
VERB_ARGUMENTS = ("none", "region", "regions", "tokens", "seat")


@dataclass(frozen=True, slots=True)
class Verb:
    """A word a player may write in a mail to take one action kind (``rules.orders``, ARCHITECTURE §10).

    The base game's verbs live in ``rules.orders``; a race or power declares its own in its module (its
    ``verbs``), next to the action kinds they take, so the grammar grows with the abilities and the core
    knows none of them.
    """

    #: The word, lower case ("dragon").
    word: str
    #: The action type it takes (one of the ability's ``actions``).
    action: str
    #: What follows the word: ``none``; ``region`` (one number); ``regions`` (numbers); ``tokens``
    #: (``region:count`` pairs); ``seat`` (a player's number or name).
    takes: str = "none"
    #: What it does, in a few words, for the grammar's help ("send the Dragon to a region").
    help: str = ""

    def __post_init__(self) -> None:
        assert self.word.isalpha() and self.word == self.word.lower(), f"verb {self.word!r}: one lower-case word"
        assert self.takes in VERB_ARGUMENTS, f"verb {self.word!r} takes {self.takes!r}"


#: The actions of the base game (rulebook, "Game Turn"). Races and powers register theirs.
BASE_KINDS: tuple[ActionKind, ...] = (
    ActionKind("pick", ("combo",), "Pick this combo"),
    ActionKind("decline", (), "Go In Decline"),
    ActionKind("abandon", ("region",), "Abandon"),
    ActionKind("conquer", ("region", "troop"), "Conquer", conquers=True),
    ActionKind("final_conquest", ("region", "troop"), "Roll the die for", conquers=True),
    ActionKind("end_conquest", (), "End the conquests"),
    ActionKind("redeploy", ("tokens", "troop"), "Redeploy", choice="redeploy"),
    ActionKind("end_turn", ("decline",), "End the turn"),
)

#: Every known action type (the base game's and the registered races' and powers'), by type.
ACTION_KINDS: dict[str, ActionKind] = {kind.type: kind for kind in BASE_KINDS}
#: type -> the fields it takes (besides "type" and "player"): :data:`ACTION_KINDS`' fields.
ACTION_FIELDS: dict[str, tuple[str, ...]] = {kind.type: kind.fields for kind in BASE_KINDS}
#: The types that conquer a region, and those that roll the die first (kept with ACTION_KINDS).
CONQUERING: set[str] = {kind.type for kind in BASE_KINDS if kind.conquers}
ROLLING: set[str] = {kind.type for kind in BASE_KINDS if kind.rolls}


def add_kind(kind: ActionKind) -> None:
    """Make an action type known (:func:`rules.abilities.register`)."""
    assert kind.type not in ACTION_KINDS, f"action type {kind.type!r} is already known"
    ACTION_KINDS[kind.type] = kind
    ACTION_FIELDS[kind.type] = kind.fields
    if kind.conquers:
        CONQUERING.add(kind.type)
    if kind.rolls:
        ROLLING.add(kind.type)


def remove_kind(name: str) -> None:
    """Forget an action type again (:func:`rules.abilities.unregister`)."""
    del ACTION_KINDS[name]
    del ACTION_FIELDS[name]
    CONQUERING.discard(name)
    ROLLING.discard(name)


def is_described(kind: str) -> bool:
    """Whether ``legal_actions`` describes this type's choice (its JSON may carry ``regions`` and ``count``)."""
    found = ACTION_KINDS.get(kind)
    return found is not None and found.choice is not None


class IllegalAction(ValueError):
    """An action the rules refuse; the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class Action:
    type: str
    player: int
    region: int | None = None
    combo: int | None = None
    troop: str = ACTIVE
    #: ``redeploy``: the complete distribution, ((region, tokens), …); a "spread" choice's kinds likewise.
    tokens: tuple[tuple[int, int], ...] = ()
    regions: tuple[int, ...] = ()
    target: int | None = None
    decline: bool = False
    #: In a choice offered by :func:`rules.legal_actions` only: how many tokens there are to distribute.
    count: int | None = None
    #: Whether the fields were checked when the action was made (:meth:`from_json`, :func:`offer`,
    #: :func:`redeploy_action`), so that ``apply`` need not check them again (:meth:`check`). Never set by
    #: ``__init__``: an action built by hand is checked by ``apply``. Not part of the value (equality, hash).
    checked: bool = field(default=False, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "player": self.player}
        for name in ACTION_FIELDS.get(self.type, ()):
            value = getattr(self, name)
            if name == "tokens":
                out[name] = {str(r): n for r, n in value}
            elif name == "regions":
                out[name] = list(value)
            elif name == "troop":
                if value != ACTIVE:
                    out[name] = value
            elif name == "decline":
                if value:
                    out[name] = True
            elif value is not None:
                out[name] = value
        if self.regions and "regions" not in ACTION_FIELDS.get(self.type, ()):
            out["regions"] = list(self.regions)  # a described choice: the regions to fill
        if self.count is not None:
            out["count"] = self.count
        return out

    def check(self) -> None:
        """Refuse, as :meth:`from_json` would, an action built in Python with a field its type needs
        left out or of the wrong kind (``Action("conquer", 0)`` has no region)."""
        # ``type(x) is int`` first: plain ints pass at once (the usual case), anything else is asked as
        # from_json asks it.
        player = self.player
        if type(player) is not int and not _is_int(player):
            raise IllegalAction("'player' must be a whole number")
        for name in ACTION_FIELDS.get(self.type, ()):
            if name in _INT_FIELDS:
                value = getattr(self, name)
                if type(value) is not int and not _is_int(value):
                    raise IllegalAction(f"'{name}' must be a whole number")
        if self.troop not in (ACTIVE, DECLINED):
            raise IllegalAction("'troop' must be 'active' or 'declined'")
        for r, n in self.tokens:
            if type(r) is not int or type(n) is not int or n < 0:
                if not all(_is_int(r) and _is_int(n) and n >= 0 for r, n in self.tokens):
                    raise IllegalAction("'tokens' must map region numbers to token counts ≥ 0")
                break
        if self.regions and not all(_is_int(r) for r in self.regions):
            raise IllegalAction("'regions' must be a list of region numbers")

    @classmethod
    def from_json(cls, data: Any) -> Action:
        """Parse an action, refusing anything malformed with a readable :class:`IllegalAction`."""
        if not isinstance(data, dict):
            raise IllegalAction("An action must be a JSON object with a 'type'")
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in ACTION_FIELDS:  # a list or an object is unhashable
            known = ", ".join(sorted(ACTION_FIELDS))
            raise IllegalAction(f"Unknown action type {kind!r}; expected one of: {known}")
        # "regions" and "count" describe a choice offered by legal_actions (is_described); apply ignores them.
        allowed = set(ACTION_FIELDS[kind]) | {"type", "player", "count"}
        if is_described(kind):
            allowed.add("regions")
        extra = sorted(set(data) - allowed)
        if extra:
            raise IllegalAction(f"Action '{kind}' does not take {', '.join(map(repr, extra))}")
        kwargs: dict[str, Any] = {"type": kind, "player": _int(data, "player", required=True)}
        for name in ACTION_FIELDS[kind]:
            if name in ("region", "combo", "target"):
                kwargs[name] = _int(data, name, required=True)
            elif name == "troop":
                troop = data.get("troop", ACTIVE)
                if troop not in (ACTIVE, DECLINED):
                    raise IllegalAction("'troop' must be 'active' or 'declined'")
                kwargs[name] = troop
            elif name == "tokens":
                kwargs[name] = _distribution(data.get("tokens", {}))
            elif name == "regions":
                regions = data.get("regions")
                if not isinstance(regions, list) or not all(_is_int(r) for r in regions):
                    raise IllegalAction("'regions' must be a list of region numbers")
                kwargs[name] = tuple(regions)
            elif name == "decline":
                decline = data.get("decline", False)
                if not isinstance(decline, bool):
                    raise IllegalAction("'decline' must be true or false")
                kwargs[name] = decline
        if is_described(kind) and "regions" in data:
            regions = data["regions"]
            if not isinstance(regions, list) or not all(_is_int(r) for r in regions):
                raise IllegalAction("'regions' must be a list of region numbers")
            kwargs["regions"] = tuple(regions)
        if "count" in data:
            kwargs["count"] = _int(data, "count", required=True)
        action = cls(**kwargs)
        _SET_CHECKED(action, True)
        return action


#: Each field's own setter (the slot's descriptor; a compiled build's attribute), which a frozen class keeps.
_SET = {f.name: vars(Action)[f.name].__set__ for f in fields(Action)}
_SET_TYPE, _SET_PLAYER, _SET_REGION, _SET_COMBO, _SET_TROOP = (
    _SET[n] for n in ("type", "player", "region", "combo", "troop")
)
_SET_TOKENS, _SET_REGIONS, _SET_TARGET, _SET_DECLINE, _SET_COUNT, _SET_CHECKED = (
    _SET[n] for n in ("tokens", "regions", "target", "decline", "count", "checked")
)


def redeploy_action(
    player: int,
    troop: str,
    tokens: tuple[tuple[int, int], ...],
    regions: tuple[int, ...] = (),
    count: int | None = None,
) -> Action:
    """``Action("redeploy", player, troop=troop, tokens=tokens, regions=regions, count=count)``, built slot by
    slot (the frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``: twice the
    cost; made at every redeployment, described and concrete).

    Marked :attr:`Action.checked`: its callers, the engine's listing and ``rules.bots.concrete``, pass the
    state's own region numbers and whole counts of tokens (``concrete`` those of a checked choice), so
    ``apply`` does not check each pair again."""
    action = _new_action(Action)
    _SET_TYPE(action, "redeploy")
    _SET_PLAYER(action, player)
    _SET_REGION(action, None)
    _SET_COMBO(action, None)
    _SET_TROOP(action, troop)
    _SET_TOKENS(action, tokens)
    _SET_REGIONS(action, regions)
    _SET_TARGET(action, None)
    _SET_DECLINE(action, False)
    _SET_COUNT(action, count)
    _SET_CHECKED(action, True)
    return action


_new_action = Action.__new__  # object.__new__, which a class compiled by mypyc refuses: its own


_OFFERS: dict[tuple[Any, ...], Action] = {}


def offer(
    type: str,
    player: int,
    region: int | None = None,
    *,
    combo: int | None = None,
    troop: str = ACTIVE,
    target: int | None = None,
    decline: bool = False,
) -> Action:
    """``Action(type, player, region, …)`` for ``legal_actions``, made once and shared: the same few
    actions (a conquest of region 12 by seat 1…) are offered again and again, and an Action never
    changes."""
    key = (type, player, region, combo, troop, target, decline)
    found = _OFFERS.get(key)
    if found is None:
        made = Action(type, player, region=region, combo=combo, troop=troop, target=target, decline=decline)
        made.check()
        _SET_CHECKED(made, True)
        found = _OFFERS.setdefault(key, made)  # another thread's, if it was first: that one is kept
    return found


_SIMPLE: dict[tuple[str, int, int | None, str], Action] = {}


def offer_at(type: str, player: int, region: int | None = None, troop: str = ACTIVE) -> Action:
    """:func:`offer` for an action with at most a region and a troop (the conquests, the abandons, the
    ends of a stretch): the same shared action, looked up by a shorter key (asked region after region)."""
    found = _SIMPLE.get((type, player, region, troop))
    if found is None:
        found = _SIMPLE.setdefault((type, player, region, troop), offer(type, player, region, troop=troop))
    return found


class _RegionOffers(dict[int, Action]):
    """Region -> :func:`offer_at` of one type, player and troop, each made when first asked."""

    __slots__ = ("type", "player", "troop")

    def __init__(self, type: str, player: int, troop: str) -> None:
        super().__init__()
        self.type, self.player, self.troop = type, player, troop

    def __missing__(self, region: int) -> Action:
        found = self[region] = offer_at(self.type, self.player, region, self.troop)
        return found


_BY_REGION: dict[tuple[str, int, str], _RegionOffers] = {}


def offers_by_region(type: str, player: int, troop: str = ACTIVE) -> dict[int, Action]:
    """``offers_by_region(type, player, troop)[region]`` is ``offer_at(type, player, region, troop)``: the
    same shared action, looked up by the region alone (``legal_actions`` lists the conquests of every
    region a troop may conquer)."""
    found = _BY_REGION.get((type, player, troop))
    if found is None:
        found = _BY_REGION.setdefault((type, player, troop), _RegionOffers(type, player, troop))
    return found


_CONQUESTS: dict[tuple[int, str], tuple[dict[int, Action], dict[int, Action]]] = {}


def conquest_offers(player: int, troop: str = ACTIVE) -> tuple[dict[int, Action], dict[int, Action]]:
    """``(offers_by_region("conquer", player, troop), offers_by_region("final_conquest", player, troop))``,
    looked up once (a conquest check offers both, once a step)."""
    found = _CONQUESTS.get((player, troop))
    if found is None:
        pair = (offers_by_region("conquer", player, troop), offers_by_region("final_conquest", player, troop))
        found = _CONQUESTS.setdefault((player, troop), pair)
    return found


_INT_FIELDS = frozenset(("region", "combo", "target"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(data: dict, name: str, *, required: bool) -> int | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not _is_int(value):
        raise IllegalAction(f"'{name}' must be a whole number")
    return value


def _distribution(value: Any) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, dict):
        raise IllegalAction("'tokens' must map region numbers to token counts, e.g. {\"3\": 2}")
    out = []
    for key, count in value.items():
        try:
            region = int(key)
        except (TypeError, ValueError):
            raise IllegalAction(f"{key!r} is not a region number") from None
        if not _is_int(count) or count < 0:
            raise IllegalAction(f"Region {region}: the token count must be a whole number ≥ 0")
        out.append((region, count))
    return tuple(sorted(out))
