"""Races and powers of the host's own design: the rulebook's blank banner and badge (ARCHITECTURE §11).

The rulebook ships "one additional blank Race banner, which you may use to create a race of your own
invention" and "one additional blank Special Power badge" ("Blank Race banner", "Blank Special Power
badge"). Here a design is data, never code::

    {"kind": "race", "name": "Sky Pirates", "tokens": 6, "text": "Arr.",
     "effects": [{"effect": "coins_per_symbol", "symbol": "magic"}, {"effect": "enters_anywhere"}]}

Each effect is one of :data:`EFFECTS`, a documented vocabulary made of what the official abilities are made
of; each says which of the engine's hooks it answers (``rules/abilities.py``) and whether it holds In
Decline. :func:`read_design` checks a design (a :class:`DesignError` names the field at fault:
``effects[2].terrain``); :func:`card` words it in the rules' own phrasing; :func:`ability_class` makes the
race or power the engine plays, a :class:`rules.abilities.Race` or ``Power`` whose hooks read the effects;
:func:`deal` puts the host's race and power into a new game as the rulebook says ("use the tokens of another
race … as stand-in tokens for your new race - and make sure to remove the corresponding old Race banner").

Its name in a game (:func:`game_name`) is the design's name with a short fingerprint of everything that
plays ("Sky Pirates (3fa2c1)"): two designs of one name, or a design edited since a game began, are two
abilities, so a running game keeps the design it was dealt (the snapshot holds it: ``GameState.designs``).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from . import rng
from .abilities import ABILITIES, POWERS, RACES, Ability, Power, Race, Slot, register
from .components import POWER_TOKENS, RACE_TOKENS

if TYPE_CHECKING:
    from .state import GameState, Troop

RACE = "race"
POWER = "power"
#: Rulebook, "Blank Race banner": "never … a number higher than 10"; "Blank Special Power badge": 5. A race
#: of no token could never conquer; a badge of none is a power that gives only its benefit.
TOKENS = {RACE: (1, 10), POWER: (0, 5)}
NAME_LENGTH = 24
TEXT_LENGTH = 280
MAX_EFFECTS = 8

#: Land terrains a design may name (Seas and the Lake are conquered only by a race that sails).
TERRAINS = ("farmland", "forest", "hill", "swamp", "mountain")
TERRAIN_WORDS = {"farmland": "Farmland", "forest": "Forest", "hill": "Hill", "swamp": "Swamp", "mountain": "Mountain"}
#: The symbols printed on regions (components.md): Mines, Magic Sources, Caverns.
SYMBOLS = ("mine", "magic", "cavern")
SYMBOL_WORDS = {"mine": "Mine", "magic": "Magic Source", "cavern": "Cavern"}

#: Whether an effect holds In Decline (rulebook, "The Races and Special Powers": the benefits "no longer apply
#: once the race is put In Decline" unless said otherwise): never; always (it is about being In Decline);
#: or as the design says (its ``in_decline`` parameter, a race's only: the rulebook's In Decline bonuses
#: are a race's, Dwarves'; a badge is discarded going In Decline).
NEVER = "never"
ALWAYS = "always"
CHOSEN = "chosen"


class DesignError(ValueError):
    """A design the rules refuse: ``field`` is its JSON path (``effects[2].terrain``), ``reason`` why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


# -- the vocabulary -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of an effect: an integer within bounds, a flag, a terrain or a symbol."""

    name: str
    kind: str  # "int" | "bool" | "terrain" | "symbol"
    words: str
    low: int = 0
    high: int = 0
    default: Any = None  # None: required

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.kind == "int":
            out = {"type": "integer", "minimum": self.low, "maximum": self.high}
        elif self.kind == "bool":
            out = {"type": "boolean"}
        else:
            out = {"type": "string", "enum": list(TERRAINS if self.kind == "terrain" else SYMBOLS)}
        out["description"] = self.words
        if self.default is not None:
            out["default"] = self.default
        return out

    def read(self, value: Any, where: str) -> Any:
        if self.kind == "int":
            if not isinstance(value, int) or isinstance(value, bool):
                raise DesignError(where, f"expected a whole number from {self.low} to {self.high}, not {value!r}")
            if not self.low <= value <= self.high:
                raise DesignError(where, f"{value} is not from {self.low} to {self.high}")
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise DesignError(where, f"expected true or false, not {value!r}")
            return value
        known = TERRAINS if self.kind == "terrain" else SYMBOLS
        if value not in known:
            raise DesignError(where, f"{value!r} is not one of {', '.join(known)}")
        return value


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect of the vocabulary: its ``id``, its parameters, the designs that may take it, whether it
    holds In Decline, the engine's hooks and flags it answers, and its words (``summary`` for the combo
    table, ``sentence`` for the card, in the rulebook's phrasing; ``who`` is "you" for a power, "your
    Sky Pirates" for a race)."""

    id: str
    label: str
    params: tuple[Param, ...]
    kinds: frozenset[str]
    in_decline: str
    hooks: tuple[str, ...]
    summary: Callable[[dict[str, Any]], str]
    sentence: Callable[[dict[str, Any], str], str]
    #: The parameters that tell two effects of this id apart (a second with the same is a contradiction).
    distinct: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the effect as a design lists it (``{"effect": id, …parameters}``)."""
        properties: dict[str, Any] = {"effect": {"const": self.id}}
        for param in self.params:
            properties[param.name] = param.schema()
        return {
            "type": "object",
            "title": self.label,
            "properties": properties,
            "required": ["effect"] + [p.name for p in self.params if p.default is None],
            "additionalProperties": False,
        }

    def to_json(self) -> dict[str, Any]:
        """The effect for the vocabulary's listing: id, words, who may take it, In Decline, hooks, schema."""
        example = {p.name: p.default if p.default is not None else _EXAMPLE[p.kind] for p in self.params}
        return {
            "id": self.id,
            "label": self.label,
            "kinds": sorted(self.kinds),
            "in_decline": self.in_decline,
            "hooks": list(self.hooks),
            "example": self.sentence(example, "you"),
            "schema": self.schema(),
        }


_EXAMPLE: dict[str, Any] = {"int": 1, "bool": False, "terrain": "forest", "symbol": "mine"}


def _coins(n: int) -> str:
    return f"{n} bonus Victory coin{'s' if n != 1 else ''}"


def _tokens(n: int, word: str = "Race token") -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _kept(p: dict[str, Any]) -> str:
    return " This is kept even when In Decline." if p.get("in_decline") else ""


def _cap(words: str) -> str:
    return words[:1].upper() + words[1:]


def _t(p: dict[str, Any]) -> str:
    return TERRAIN_WORDS[p["terrain"]]


def _s(p: dict[str, Any]) -> str:
    return SYMBOL_WORDS[p["symbol"]]


COINS = Param("coins", "int", "bonus coins", 1, 3, 1)
IN_DECLINE = Param("in_decline", "bool", "kept In Decline (a race's only)", default=False)
TERRAIN = Param("terrain", "terrain", "the terrain")
SYMBOL = Param("symbol", "symbol", "the symbol on the region")
DISCOUNT = Param("tokens", "int", "tokens fewer", 1, 2, 1)
BOTH = frozenset({RACE, POWER})

EFFECT_LIST = (
    Effect(
        "coins_per_terrain",
        "Bonus coins per region of a terrain",
        (TERRAIN, COINS, IN_DECLINE),
        BOTH,
        CHOSEN,
        ("score", "scores_in_decline"),
        lambda p: f"+{p['coins']} coin per {_t(p)} region.",
        lambda p, who: (
            f"Each {_t(p)} Region {who} occupy is worth {_coins(p['coins'])} at the end of your turn." + _kept(p)
        ),
        ("terrain",),
    ),
    Effect(
        "coins_per_symbol",
        "Bonus coins per region with a symbol",
        (SYMBOL, COINS, IN_DECLINE),
        BOTH,
        CHOSEN,
        ("score", "scores_in_decline"),
        lambda p: f"+{p['coins']} coin per {_s(p)} region.",
        lambda p, who: (
            f"Each {_s(p)} Region {who} occupy is worth {_coins(p['coins'])} at the end of your turn." + _kept(p)
        ),
        ("symbol",),
    ),
    Effect(
        "coins_per_region",
        "Bonus coins per region held",
        (COINS, IN_DECLINE),
        BOTH,
        CHOSEN,
        ("score", "scores_in_decline"),
        lambda p: f"+{p['coins']} coin per region held.",
        lambda p, who: f"Each Region {who} occupy is worth {_coins(p['coins'])} at the end of your turn." + _kept(p),
    ),
    Effect(
        "coins_per_conquest",
        "Bonus coins per non-empty region conquered this turn",
        (COINS,),
        BOTH,
        NEVER,
        ("score",),
        lambda p: f"+{p['coins']} coin per non-empty region conquered this turn.",
        lambda p, who: (
            f"Each non-empty Region {who} conquered this turn is worth {_coins(p['coins'])} at the end of your turn."
        ),
    ),
    Effect(
        "coins_each_turn",
        "Bonus coins each turn while Active",
        (Param("coins", "int", "bonus coins", 1, 3, 2),),
        BOTH,
        NEVER,
        ("score",),
        lambda p: f"+{p['coins']} coins each turn while Active.",
        lambda p, who: f"Collect {_coins(p['coins'])} at the end of each turn your race hasn't yet gone into Decline.",
    ),
    Effect(
        "coins_first_turn",
        "Bonus coins once, on the first turn",
        (Param("coins", "int", "bonus coins", 1, 7, 7),),
        BOTH,
        NEVER,
        ("score",),
        lambda p: f"+{p['coins']} coins once, at the end of the first turn.",
        lambda p, who: f"Collect {_coins(p['coins'])}, once only, at the end of your first turn.",
    ),
    Effect(
        "discount_terrain",
        "Cheaper conquests of a terrain",
        (TERRAIN, DISCOUNT),
        BOTH,
        NEVER,
        ("conquest_discount",),
        lambda p: f"{_t(p)} regions cost {_tokens(p['tokens'], 'token')} fewer.",
        lambda p, who: (
            f"{_cap(who)} may conquer any {_t(p)} Region with {_tokens(p['tokens'])} less than normal. "
            "A minimum of 1 token is still required."
        ),
        ("terrain",),
    ),
    Effect(
        "discount_symbol",
        "Cheaper conquests of regions with a symbol",
        (SYMBOL, DISCOUNT),
        BOTH,
        NEVER,
        ("conquest_discount",),
        lambda p: f"{_s(p)} regions cost {_tokens(p['tokens'], 'token')} fewer.",
        lambda p, who: (
            f"{_cap(who)} may conquer any Region with a {_s(p)} with {_tokens(p['tokens'])} less than "
            "normal. A minimum of 1 token is still required."
        ),
        ("symbol",),
    ),
    Effect(
        "discount_all",
        "Cheaper conquests everywhere",
        (DISCOUNT,),
        BOTH,
        NEVER,
        ("conquest_discount",),
        lambda p: f"Every conquest costs {_tokens(p['tokens'], 'token')} fewer.",
        lambda p, who: (
            f"{_cap(who)} may conquer any Region with {_tokens(p['tokens'])} less than normal. A minimum "
            "of 1 token is still required."
        ),
    ),
    Effect(
        "immune_terrain",
        "Regions of a terrain immune",
        (TERRAIN,),
        BOTH,
        NEVER,
        ("shield", "on_pick", "on_decline", "check"),
        lambda p: f"{_t(p)} regions held are immune while Active.",
        lambda p, who: (
            f"The {_t(p)} Regions {who} occupy are immune to enemy conquests as well as to their racial "
            "and special powers, until your race goes into Decline."
        ),
        ("terrain",),
    ),
    Effect(
        "immune_symbol",
        "Regions with a symbol immune",
        (SYMBOL,),
        BOTH,
        NEVER,
        ("shield", "on_pick", "on_decline", "check"),
        lambda p: f"{_s(p)} regions held are immune while Active.",
        lambda p, who: (
            f"The Regions with a {_s(p)} {who} occupy are immune to enemy conquests as well as to their "
            "racial and special powers, until your race goes into Decline."
        ),
        ("symbol",),
    ),
    Effect(
        "enters_anywhere",
        "First conquest anywhere",
        (),
        BOTH,
        NEVER,
        ("enters_anywhere",),
        lambda p: "First conquest anywhere.",
        lambda p, who: f"{_cap(who)} may enter the map through any Region of the map, not just border ones.",
    ),
    Effect(
        "enters_terrain",
        "First conquest on any region of a terrain",
        (TERRAIN,),
        BOTH,
        NEVER,
        ("entry",),
        lambda p: f"First conquest on any {_t(p)} region too.",
        lambda p, who: f"{_cap(who)} may enter the map through any {_t(p)} Region, not just border ones.",
        ("terrain",),
    ),
    Effect(
        "tokens_first_turn",
        "Extra tokens on the first turn",
        (Param("tokens", "int", "extra tokens", 1, 4, 2),),
        BOTH,
        NEVER,
        ("on_pick",),
        lambda p: f"+{_tokens(p['tokens'], 'token')} when picked.",
        lambda p, who: (
            f"When you pick this combo, take {_tokens(p['tokens'])} more from the storage tray. If there "
            "are no more tokens in the storage tray, you do not receive any additional tokens."
        ),
    ),
    Effect(
        "tokens_each_turn",
        "Extra tokens each turn while Active",
        (Param("tokens", "int", "extra tokens", 1, 2, 1),),
        BOTH,
        NEVER,
        ("on_conquests_end",),
        lambda p: f"+{_tokens(p['tokens'], 'token')} each turn while Active.",
        lambda p, who: (
            f"During each of your Troop Redeployments until your race goes into Decline, take "
            f"{_tokens(p['tokens'])} from the storage tray and add them to the troops you redeploy. If there are "
            "no more tokens in the storage tray, you do not receive any additional tokens."
        ),
    ),
    Effect(
        "keeps_tokens_in_decline",
        "All tokens stay going In Decline",
        (),
        frozenset({RACE}),
        ALWAYS,
        ("keeps_all_in_decline",),
        lambda p: "All tokens stay going In Decline.",
        lambda p, who: (
            f"{_cap(who)} tokens all stay on the map when going into Decline, instead of the usual 1 token per Region."
        ),
    ),
    Effect(
        "conquers_in_decline",
        "Conquers In Decline",
        (),
        frozenset({RACE}),
        ALWAYS,
        (
            "conquers_in_decline",
            "declined_refusal",
            "ready_declined",
            "declined_readied",
            "end_declined_conquests",
        ),
        lambda p: "In Decline, still conquers.",
        lambda p, who: (
            f"Once In Decline, {who} can continue to conquer new Regions in the following turns, playing "
            "exactly as if they were still Active tokens, before any conquest by your Active race."
        ),
    ),
)
#: The vocabulary, by id.
EFFECTS: dict[str, Effect] = {e.id: e for e in EFFECT_LIST}

#: Effects that cannot both hold: the first makes the second say nothing more (or the two disagree).
CONTRADICTIONS: dict[tuple[str, str], str] = {
    ("enters_anywhere", "enters_terrain"): "a race that enters anywhere enters by every terrain already",
}

SCORING = frozenset({"coins_per_terrain", "coins_per_symbol", "coins_per_region", "coins_per_conquest"})
SCORING |= {"coins_each_turn", "coins_first_turn"}
DISCOUNTS = frozenset({"discount_terrain", "discount_symbol", "discount_all"})
IMMUNITY = frozenset({"immune_terrain", "immune_symbol"})


# -- a design -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Design:
    """A checked design (:func:`read_design`): its effects with every parameter, defaults filled in."""

    kind: str
    name: str
    tokens: int
    text: str
    effects: tuple[tuple[tuple[str, Any], ...], ...]  # each: (("effect", id), (param, value)…)

    def chosen(self) -> list[tuple[Effect, dict[str, Any]]]:
        """Each effect of the vocabulary with its parameters."""
        out = []
        for items in self.effects:
            params = dict(items)
            out.append((EFFECTS[params.pop("effect")], params))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "tokens": self.tokens,
            "text": self.text,
            "effects": [dict(items) for items in self.effects],
        }


DESIGN_FIELDS = ("kind", "name", "tokens", "text", "effects")


def read_design(data: Any, where: str = "") -> Design:
    """The design ``data`` holds, checked: every fault a :class:`DesignError` naming the field (``where``
    prefixes it: ``custom.race``)."""

    def at(key: str | int) -> str:
        if isinstance(key, int):
            return f"{where}[{key}]"
        return f"{where}.{key}" if where else key

    if not isinstance(data, dict):
        raise DesignError(where, "expected a design: an object with kind, name, tokens, text and effects")
    for key in data:
        if key not in DESIGN_FIELDS:
            raise DesignError(at(str(key)), f"unknown field (a design has {', '.join(DESIGN_FIELDS)})")
    for key in ("kind", "name", "tokens"):
        if key not in data:
            raise DesignError(at(key), "missing")
    kind = data["kind"]
    if kind not in (RACE, POWER):
        raise DesignError(at("kind"), f"{kind!r} is not 'race' or 'power'")
    name = _name(data["name"], at("name"))
    low, high = TOKENS[kind]
    tokens = data["tokens"]
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise DesignError(at("tokens"), f"expected a whole number from {low} to {high}, not {tokens!r}")
    if not low <= tokens <= high:
        # Rulebook, "Blank Race banner" / "Blank Special Power badge".
        what = "a race" if kind == RACE else "a special power"
        raise DesignError(at("tokens"), f"{tokens} is not from {low} to {high}: the rulebook's limit for {what}")
    text = _text(data.get("text", ""), at("text"))
    effects_data = data.get("effects", [])
    if not isinstance(effects_data, list):
        raise DesignError(at("effects"), "expected a list of effects")
    if len(effects_data) > MAX_EFFECTS:
        raise DesignError(at("effects"), f"{len(effects_data)} effects; {MAX_EFFECTS} at most")
    effects = []
    seen: dict[tuple[Any, ...], int] = {}
    ids: dict[str, int] = {}
    for k, item in enumerate(effects_data):
        here = f"{at('effects')}[{k}]"
        effect, params = _effect(item, here, kind)
        same = (effect.id,) + tuple(params[p] for p in effect.distinct)
        if same in seen:
            raise DesignError(here, f"the same effect as effects[{seen[same]}]; give it once")
        seen[same] = k
        for (first, second), why in CONTRADICTIONS.items():
            for a, b in ((first, second), (second, first)):
                if effect.id == b and a in ids:
                    raise DesignError(here, f"contradicts effects[{ids[a]}] ({a}): {why}")
        ids.setdefault(effect.id, k)
        effects.append((("effect", effect.id),) + tuple((p.name, params[p.name]) for p in effect.params))
    return Design(kind, name, tokens, text, tuple(effects))


def _effect(item: Any, where: str, kind: str) -> tuple[Effect, dict[str, Any]]:
    if not isinstance(item, dict):
        raise DesignError(where, "expected an effect: an object with 'effect' and its parameters")
    effect_id = item.get("effect")
    if effect_id not in EFFECTS:
        raise DesignError(f"{where}.effect", f"{effect_id!r} is not an effect of the vocabulary")
    effect = EFFECTS[effect_id]
    if kind not in effect.kinds:
        raise DesignError(f"{where}.effect", f"{effect_id} is a race's effect, not a special power's")
    known = {p.name: p for p in effect.params}
    for key in item:
        if key != "effect" and key not in known:
            names = ", ".join(known) or "none"
            raise DesignError(f"{where}.{key}", f"unknown parameter of {effect_id} (its parameters: {names})")
    params = {}
    for param in effect.params:
        if param.name in item:
            params[param.name] = param.read(item[param.name], f"{where}.{param.name}")
        elif param.default is None:
            raise DesignError(f"{where}.{param.name}", "missing")
        else:
            params[param.name] = param.default
    if params.get("in_decline") and kind == POWER:
        # Rulebook, "Entering In Decline": the badge is discarded; its benefits end with it.
        raise DesignError(f"{where}.in_decline", "a special power's bonus ends In Decline (its badge is discarded)")
    return effect, params


_REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def _clean(value: str) -> str:
    """NFC, line ends as ``\\n``, trimmed; refused: control and format characters (they hide or turn text:
    the rule for names and table talk in the service)."""
    return unicodedata.normalize("NFC", value.replace("\r\n", "\n").replace("\r", "\n")).strip()


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise DesignError(where, "expected a name")
    name = " ".join(_clean(value).split())
    if not name:
        raise DesignError(where, "a design needs a name")
    if len(name) > NAME_LENGTH:
        raise DesignError(where, f"{len(name)} characters; {NAME_LENGTH} at most")
    if any(unicodedata.category(c) in _REFUSED for c in name) or "(" in name or ")" in name:
        raise DesignError(where, "letters, digits, spaces and punctuation other than brackets only")
    official = {n.casefold(): n for n in (*RACE_TOKENS, *POWER_TOKENS, "Lost Tribe", "Lost Tribes")}
    if name.casefold() in official:
        raise DesignError(where, f"{official[name.casefold()]} is an official name; choose another")
    return name


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise DesignError(where, "expected text")
    text = _clean(value)
    if len(text) > TEXT_LENGTH:
        raise DesignError(where, f"{len(text)} characters; {TEXT_LENGTH} at most")
    bad = [c for c in text if c != "\n" and unicodedata.category(c) in _REFUSED]
    if bad:
        raise DesignError(where, f"a control or format character (U+{ord(bad[0]):04X}) is not allowed")
    return text


# -- words -----------------------------------------------------------------------------------------------------
def card(design: Design) -> dict[str, Any]:
    """The design's card in the rules' own words: ``summary`` (one line, for the combo table), ``description``
    (a sentence per effect, in the rulebook's phrasing) and each effect's words and In Decline rule; the
    host's ``text`` beside them, as written (checked by :func:`read_design`)."""
    who = "you" if design.kind == POWER else f"your {design.name}"
    chosen = design.chosen()
    if chosen:
        summary = " ".join(effect.summary(params) for effect, params in chosen)
        sentences = [effect.sentence(params, who) for effect, params in chosen]
    elif design.kind == RACE:
        summary, sentences = "No power but their number.", ["No Race benefit; their number of tokens is all."]
    else:
        summary, sentences = "Only its tokens.", ["No benefit but the Race tokens it adds."]
    return {
        "kind": design.kind,
        "name": design.name,
        "tokens": design.tokens,
        "summary": summary,
        "description": " ".join(sentences),
        "text": design.text,
        "effects": [
            {
                "effect": effect.id,
                "words": sentence,
                "in_decline": _holds_in_decline(effect, params),
            }
            for (effect, params), sentence in zip(chosen, sentences, strict=False)
        ],
    }


def _holds_in_decline(effect: Effect, params: dict[str, Any]) -> bool:
    return bool(params.get("in_decline")) if effect.in_decline == CHOSEN else effect.in_decline == ALWAYS


def vocabulary() -> list[dict[str, Any]]:
    """Every effect, for the designer and the API: id, words, who may take it, In Decline, hooks, schema."""
    return [effect.to_json() for effect in EFFECT_LIST]


def design_schema() -> dict[str, Any]:
    """The JSON Schema of a design (its effects one of :data:`EFFECTS`' schemas). What it cannot say,
    :func:`read_design` still refuses: an official name, an effect twice, contradictions, a race's effect or an
    In Decline bonus on a power."""
    bounds = [
        {
            "if": {"properties": {"kind": {"const": kind}}},
            "then": {"properties": {"tokens": {"minimum": low, "maximum": high}}},
        }
        for kind, (low, high) in TOKENS.items()
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "allOf": bounds,
        "properties": {
            "kind": {"enum": [RACE, POWER]},
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_LENGTH},
            "tokens": {"type": "integer", "minimum": 0, "maximum": TOKENS[RACE][1]},
            "text": {"type": "string", "maxLength": TEXT_LENGTH},
            "effects": {
                "type": "array",
                "maxItems": MAX_EFFECTS,
                "items": {"oneOf": [effect.schema() for effect in EFFECT_LIST]},
            },
        },
        "required": ["kind", "name", "tokens"],
        "additionalProperties": False,
    }


# -- the race or power the engine plays --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Guard(Slot):
    """An immunity's state: the seat whose Active race it guards (set on the pick, gone In Decline)."""

    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Moment(Slot):
    """This turn: a race that conquers In Decline was readied, and its moment is over (as Ghouls); the
    tokens of each turn were taken (as Skeletons', once a turn)."""

    readied: bool = False
    done: bool = False
    reinforced: bool = False


def game_name(design: Design, box: int | None = None) -> str:
    """Its name in a game: the design's, with a fingerprint of everything that plays (and, for a race, the
    stand-in's box), so that no two different designs share one."""
    canonical = json.dumps([design.to_json(), box], sort_keys=True, separators=(",", ":"))
    return f"{design.name} ({hashlib.sha256(canonical.encode()).hexdigest()[:6]})"


def _matches(region: Any, params: dict[str, Any]) -> bool:
    if "terrain" in params:
        return bool(region.terrain == params["terrain"])
    if "symbol" in params:
        return bool(getattr(region, params["symbol"]))
    return True


def _score(self: Ability, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
    total = 0
    board = state.board.regions
    for effect, params in _effects(self, SCORING):
        if troop.declined and not params.get("in_decline"):
            continue
        coins = params["coins"]
        kind = effect.id
        if kind in ("coins_per_terrain", "coins_per_symbol"):
            total += coins * sum(1 for i in regions if _matches(board[i], params))
        elif kind == "coins_per_region":
            total += coins * len(regions)
        elif kind == "coins_per_conquest":
            total += coins * state.t.nonempty_conquered  # as Orcs and Pillaging
        elif kind == "coins_each_turn":
            total += coins  # as Alchemist
        elif troop.picked_turn == state.turn and state.current == seat:  # coins_first_turn, as Wealthy
            total += coins
    return total


def _discount(self: Ability, state: GameState, seat: int, troop: Troop, region: int) -> int:
    land = state.board.regions[region]
    return sum(params["tokens"] for _, params in _effects(self, DISCOUNTS) if _matches(land, params))


def _entry(self: Ability, state: GameState, seat: int, troop: Troop) -> Iterable[int]:
    board = state.board
    terrains = {params["terrain"] for _, params in _effects(self, {"enters_terrain"})}
    return [region.id for region in board.regions if region.terrain in terrains]


def _on_pick(self: Ability, state: GameState, seat: int, troop: Troop) -> None:
    if _effects(self, IMMUNITY):
        self.write(state, Guard(seat))
    _take_tokens(self, state, troop, {"tokens_first_turn"})


def _on_conquests_end(self: Ability, state: GameState, seat: int, troop: Troop) -> None:
    # Given for the redeployment, as Skeletons' (their rule's moment, so that what legal_actions offers
    # for the conquests, read from the tokens in hand and on the board, stays exact); once a turn.
    moment = self.read_turn(state, Moment)
    if not moment.reinforced:
        _take_tokens(self, state, troop, {"tokens_each_turn"})
        self.write_turn(state, replace(moment, reinforced=True))


def _take_tokens(self: Ability, state: GameState, troop: Troop, kinds: Iterable[str]) -> None:
    from .troops import box_left  # the box, counted from the state (troops builds on the abilities)

    wanted = sum(params["tokens"] for _, params in _effects(self, kinds))
    if wanted:
        # "If there are no more tokens in the storage tray, you do not receive any additional tokens."
        troop.hand += max(0, min(wanted, box_left(state, troop.race)))


def _on_decline(self: Ability, state: GameState, seat: int, troop: Troop) -> None:
    self.write(state, Guard())


def _shield(self: Ability, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
    holder = self.read(state, Guard).seat
    r = state.regions[region]
    if holder is None or r.owner != holder or seat == holder:
        return None
    active = state.players[holder].active
    if active is None or r.race != active.race or self.name not in (active.race, active.power):
        return None
    land = state.board.regions[region]
    for _, params in _effects(self, IMMUNITY):
        if _matches(land, params):
            return f"Region {region} is immune: the {self.title} protect it"
    return None


def _check(self: Ability, state: GameState) -> None:
    holder = self.read(state, Guard).seat
    active = state.players[holder].active if holder is not None and 0 <= holder < len(state.players) else None
    if active is None or self.name not in (active.race, active.power):
        raise ValueError(f"abilities.{self.name}: seat {holder} holds no Active {self.name}")


def _declined_refusal(self: Ability, state: GameState, seat: int, troop: Troop) -> str | None:
    # As Ghouls (rulings): before or after the turn's pick, but before any conquest of the Active race.
    if self.read_turn(state, Moment).done or state.t.conquests:
        return f"In Decline {self.title} conquer before your Active race; that moment has passed"
    return None


def _ready_declined(self: Ability, state: GameState, seat: int, troop: Troop) -> None:
    from .conquest import ready_tokens  # conquest builds on the abilities

    moment = self.read_turn(state, Moment)
    if not moment.readied:
        ready_tokens(state, seat, troop)
        self.write_turn(state, replace(moment, readied=True))


def _declined_readied(self: Ability, state: GameState) -> bool:
    return self.read_turn(state, Moment).readied


def _end_declined_conquests(self: Ability, state: GameState, seat: int, troop: Troop) -> None:
    moment = self.read_turn(state, Moment)
    if not moment.done:
        self.write_turn(state, replace(moment, done=True))


def _effects(ability: Ability, kinds: Iterable[str]) -> list[tuple[Effect, dict[str, Any]]]:
    # Set on the generated class only (ability_class), so read by name: Ability does not declare it.
    chosen: list[tuple[Effect, dict[str, Any]]] = getattr(ability, "chosen")  # noqa: B009
    wanted = set(kinds)
    return [(effect, params) for effect, params in chosen if effect.id in wanted]


def ability_class(design: Design, box: int | None = None) -> type[Ability]:
    """The race (``box``: the stand-in's tokens in the box) or power the engine plays for ``design``: a
    subclass of :class:`rules.abilities.Race` or ``Power`` that overrides only the hooks its effects answer
    (:attr:`Effect.hooks`), each reading the effects."""
    chosen = design.chosen()
    ids = {effect.id for effect, _ in chosen}
    words = card(design)
    namespace: dict[str, Any] = {
        "name": game_name(design, box),
        "title": design.name,
        "tokens": design.tokens,
        "summary": words["summary"],
        "description": words["description"],
        "source": f'The host\'s design "{design.name}" (rulebook, "Blank '
        + ("Race banner" if design.kind == RACE else "Special Power badge")
        + '")',
        "designed": True,
        "design": design,
        "chosen": chosen,
        "enters_anywhere": "enters_anywhere" in ids,
        "keeps_all_in_decline": "keeps_tokens_in_decline" in ids,
        "conquers_in_decline": "conquers_in_decline" in ids,
        "scores_in_decline": any(params.get("in_decline") for _, params in chosen),
    }
    if design.kind == RACE:
        namespace["box"] = box if box is not None else design.tokens
    if ids & SCORING:
        namespace["score"] = _score
    if ids & DISCOUNTS:
        namespace["conquest_discount"] = _discount
    if "enters_terrain" in ids:
        namespace["entry"] = _entry
    if ids & IMMUNITY or "tokens_first_turn" in ids:
        namespace["on_pick"] = _on_pick
    if "tokens_each_turn" in ids:
        namespace.update(turn_slot=Moment, on_conquests_end=_on_conquests_end)
    if ids & IMMUNITY:
        namespace.update(slot=Guard, shield=_shield, on_decline=_on_decline, check=_check)
    if "conquers_in_decline" in ids:
        namespace.update(
            turn_slot=Moment,
            declined_refusal=_declined_refusal,
            ready_declined=_ready_declined,
            declined_readied=_declined_readied,
            end_declined_conquests=_end_declined_conquests,
        )
    base: type[Ability] = Race if design.kind == RACE else Power
    return type(f"Designed{'Race' if design.kind == RACE else 'Power'}", (base,), namespace)


def install(design: Design, box: int | None = None) -> str:
    """Make the design's race or power known to the engine (once per process: its :func:`game_name` names
    one design only); return that name."""
    name = game_name(design, box)
    if name not in ABILITIES:
        register(ability_class(design, box))
    return name


# -- into a game -------------------------------------------------------------------------------------------------
CUSTOM_FIELDS = ("race", "replaces", "power", "power_replaces", "first")
#: Sets apart the word the stand-in is drawn from (``deal``) from the game's next words.
STAND_IN_SALT = 0x5EED_57A2_D1A5_0001


def official(table: dict[str, Any]) -> list[str]:
    """The names of a registry table (``RACES``, ``POWERS``) that every game deals: all but designs."""
    return sorted(name for name, ability in table.items() if not ability.designed)


def deal(
    custom: Any, state_rng: int, races: list[str], powers: list[str]
) -> tuple[int, dict[str, Any], list[str], list[str]]:
    """Put the host's race and power into the shuffled stacks (``rules.new_game``'s ``custom``):

    - ``race``: a design; it takes the place of the official banner ``replaces`` (named, else one drawn
      from the seed among those with at least as many tokens in the box as the design has), whose tokens
      are its stand-ins: its box is that race's (rulebook, "Blank Race banner": "use the tokens of another
      race (with a similar or greater number of tokens) as stand-in tokens … remove the corresponding old
      Race banner from the game before the start");
    - ``power``: a design, an extra badge shuffled into the stack ("Blank Special Power badge"); or, with
      ``power_replaces``, in the place of that official badge (a house choice);
    - ``first``: the host's race and power on top of their stacks, so the first combo of the column.

    Returns the generator, the designs for ``GameState.designs`` and the two stacks. Every fault is a
    :class:`DesignError` naming the field (``custom.race.effects[1].terrain``, ``custom.replaces``).
    """
    if not isinstance(custom, dict):
        raise DesignError("custom", "expected an object with race, replaces, power, power_replaces and first")
    for key in custom:
        if key not in CUSTOM_FIELDS:
            raise DesignError(f"custom.{key}", f"unknown field (known: {', '.join(CUSTOM_FIELDS)})")
    first = custom.get("first", False)
    if not isinstance(first, bool):
        raise DesignError("custom.first", f"expected true or false, not {first!r}")
    designs: dict[str, Any] = {}
    races, powers = list(races), list(powers)
    if custom.get("race") is not None:
        design = read_design(custom["race"], "custom.race")
        if design.kind != RACE:
            raise DesignError("custom.race.kind", "the host's race must be a race design")
        replaces = custom.get("replaces")
        fitting = sorted(name for name in races if RACES[name].box_tokens() >= design.tokens)
        if replaces is None:
            if not fitting:
                raise DesignError("custom.race.tokens", "no race of this game has that many tokens to stand in")
            # Drawn without moving the game's generator, so the same game comes of naming the banner drawn
            # (custom_of, which the replay of a game from its seed uses), and from a word of its own: the
            # stand-in is public, the place of the host's badge in the stack (drawn next) is not.
            _, k = rng.below(state_rng ^ STAND_IN_SALT, len(fitting))
            replaces = fitting[k]
        elif replaces not in races:
            raise DesignError("custom.replaces", f"{replaces!r} is not an official race of this game")
        elif replaces not in fitting:
            box = RACES[replaces].box_tokens()
            fewer = f"the {replaces} have {box} tokens in the box, fewer than the design's {design.tokens}"
            raise DesignError("custom.replaces", fewer)
        name = install(design, RACES[replaces].box_tokens())
        races[races.index(replaces)] = name
        if first:
            races.remove(name)
            races.insert(0, name)
        designs[name] = design.to_json() | {"replaces": replaces, "first": first}
    elif custom.get("replaces") is not None:
        raise DesignError("custom.replaces", "names the banner a race design replaces; there is no race design")
    if custom.get("power") is not None:
        design = read_design(custom["power"], "custom.power")
        if design.kind != POWER:
            raise DesignError("custom.power.kind", "the host's power must be a special power design")
        name = install(design)
        replaced = custom.get("power_replaces")
        if replaced is not None:
            if replaced not in powers:
                raise DesignError("custom.power_replaces", f"{replaced!r} is not an official special power")
            powers[powers.index(replaced)] = name
        else:
            state_rng, k = rng.below(state_rng, len(powers) + 1)
            powers.insert(k, name)
        if first:
            powers.remove(name)
            powers.insert(0, name)
        designs[name] = design.to_json() | {"replaces": replaced, "first": first}
    elif custom.get("power_replaces") is not None:
        raise DesignError("custom.power_replaces", "names the badge a power design replaces; there is no power design")
    return state_rng, designs, races, powers


def read_designs(data: Any, where: str = "designs") -> dict[str, Any]:
    """A snapshot's ``designs`` (``GameState.designs``), each checked and made known to the engine under the
    name the game gave it; a ValueError names the field."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object")
    out: dict[str, Any] = {}
    for key, entry in data.items():
        here = f"{where}.{key}"
        if not isinstance(entry, dict):
            raise ValueError(f"{here}: expected a design")
        replaces, first = entry.get("replaces"), entry.get("first", False)
        if not isinstance(first, bool):
            raise ValueError(f"{here}.first: expected true or false, not {first!r}")
        design = read_design({k: v for k, v in entry.items() if k not in ("replaces", "first")}, here)
        table: dict[str, Race] | dict[str, Power] = RACES if design.kind == RACE else POWERS
        if replaces is not None and (
            not isinstance(replaces, str) or replaces not in table or table[replaces].designed
        ):
            raise ValueError(f"{here}.replaces: {replaces!r} is not an official {design.kind}")
        if design.kind == RACE and replaces is None:
            raise ValueError(f"{here}.replaces: a race design stands in for an official race")
        box = RACES[replaces].box_tokens() if design.kind == RACE and isinstance(replaces, str) else None
        if game_name(design, box) != key:
            raise ValueError(f"{here}: not the name this design has in a game ({game_name(design, box)})")
        install(design, box)
        out[key] = design.to_json() | {"replaces": replaces, "first": first}
    return out


def custom_of(state: GameState) -> dict[str, Any] | None:
    """The ``custom`` that dealt this game's designs (``rules.new_game``), for replaying it from its seed:
    ``new_game(n, seed=…, options=…, custom=custom_of(state))`` is the game as it began (the stand-in
    named, as drawn); None for a game without designs."""
    if not state.designs:
        return None
    out: dict[str, Any] = {}
    for entry in state.designs.values():
        design = {k: v for k, v in entry.items() if k not in ("replaces", "first")}
        if entry["kind"] == RACE:
            out.update(race=design, replaces=entry["replaces"])
        else:
            out["power"] = design
            if entry["replaces"] is not None:
                out["power_replaces"] = entry["replaces"]
        out["first"] = entry.get("first", False)
    return out


def game_races(state: GameState) -> list[str]:
    """The race banners of this game: the official ones but those the host's race replaced, and it."""
    return _roster(state, RACE, RACES)


def game_powers(state: GameState) -> list[str]:
    """The special power badges of this game: the official ones (but one the host's power replaced) and it."""
    return _roster(state, POWER, POWERS)


def _roster(state: GameState, kind: str, table: dict[str, Any]) -> list[str]:
    mine = [key for key, d in state.designs.items() if d["kind"] == kind]
    replaced = {state.designs[key]["replaces"] for key in mine}
    return sorted([name for name in official(table) if name not in replaced] + mine)
