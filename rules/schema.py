"""Reading a state's JSON (``rules.read_state``, the inverse of ``GameState.to_json``): every field checked,
schema-1 states converted.

A state read from storage or sent by a client is checked before the engine trusts it: the schema version,
the board and the counts of players and regions, owners, phases and seats in range, known races and powers,
every banner and badge somewhere exactly once, and tokens within the box (components.md). A fault is a
ValueError naming the field: ``"regions[12].tokens: 31 is more than the 18 Lost Tribe tokens in the box"``.

Schema 1 kept the state of some races and powers in the core records (markers as fields of a region,
extras as fields of a troop, flags of the turn as fields of ``turn_state``); each ability names the fields
it used (``schema_1_fields``) and moves them into its own state (``upgrade_schema_1``), with the helpers
below.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from .abilities import ABILITIES, POWERS, RACES, Slot
from .board import BOARD_NAMES, Board, load_board
from .components import LOST_TRIBE_TOKENS, VISIBLE_COMBOS
from .designs import game_powers, game_races, read_designs
from .state import (
    LOST_TRIBE,
    PHASES,
    REDEPLOY_ASK,
    REDEPLOY_AUTO,
    SCHEMA_VERSION,
    Combo,
    GameState,
    Phase,
    PlayerState,
    RegionState,
    Troop,
    TurnState,
)

TOP_FIELDS = (
    "schema",
    "board",
    "turns",
    "turn",
    "current",
    "phase",
    "options",
    "players",
    "regions",
    "abilities",
    "combos",
    "race_stack",
    "power_stack",
    "power_discard",
    "rng",
    "turn_state",
    "defenders",
    "last",
)
REGION_FIELDS = ("owner", "race", "tokens", "mountain")
TROOP_FIELDS = ("race", "power", "declined", "hand", "picked_turn")
PLAYER_FIELDS = ("coins", "active", "declined", "auto_passes")
TURN_FIELDS = ("picked", "readied", "conquests", "conquered", "nonempty_conquered", "attacked", "abilities")
_HEX = re.compile(r"[0-9a-f]{16}")


def read_state(data: Any) -> GameState:
    """``rules.read_state``: the state ``data`` holds, checked; a schema-1 state converted."""
    if not isinstance(data, dict):
        raise ValueError("Not a game state: expected a JSON object")
    version = data.get("schema")
    if version == 1:
        return _upgrade_schema_1(data)
    if version == 2:
        # Schema 3 added ``designs`` (the host's own race and power, ARCHITECTURE §11): none in schema 2.
        if "designs" in data:
            raise ValueError("designs: unknown field")
        data = dict(data, schema=SCHEMA_VERSION)
    if version not in (2, SCHEMA_VERSION):
        raise ValueError(f"Not a game state of schema {SCHEMA_VERSION} (or 2, 1): 'schema' is {version!r}")
    state = _read(data)
    _check(state)
    return state.done()


# -- small readers, each naming the field at fault ---------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any, where: str, low: int | None = None, high: int | None = None) -> int:
    if not _is_int(value):
        raise ValueError(f"{where}: expected an integer, not {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{where}: {value} is less than {low}")
    if high is not None and value > high:
        raise ValueError(f"{where}: {value} is more than {high}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected true or false, not {value!r}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, not {type(value).__name__}")
    return value


def _object(value: Any, where: str, known: tuple[str, ...], required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, not {type(value).__name__}")
    for key in value:
        if key not in known:
            raise ValueError(f"{_at(where, key)}: unknown field")
    for key in required:
        if key not in value:
            raise ValueError(f"{_at(where, key)}: missing")
    return value


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _name(value: Any, where: str, table: dict[str, Any], what: str) -> str:
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{where}: {value!r} is not a {what} of this game")
    return value


# -- schema 2 -------------------------------------------------------------------------------------------------
def _read(data: dict[str, Any]) -> GameState:
    _object(data, "", TOP_FIELDS + ("designs",), TOP_FIELDS)
    # The host's designs first: the names below may be theirs (read_designs makes them known).
    designs = read_designs(data["designs"]) if "designs" in data else {}
    board_name = data["board"]
    if board_name not in BOARD_NAMES:
        raise ValueError(f"board: {board_name!r} is not one of {', '.join(BOARD_NAMES)}")
    board = load_board(board_name)
    turns = _int(data["turns"], "turns")
    if turns != board.turns:
        raise ValueError(f"turns: {turns} is not the {board.turns} turns of the {board_name} board")
    players_data = _list(data["players"], "players")
    n = len(players_data)
    if not 2 <= n <= 5:
        raise ValueError(f"players: {n} players; a game has 2 to 5")
    if data["phase"] not in PHASES:
        raise ValueError(f"phase: {data['phase']!r} is not one of {', '.join(PHASES)}")
    phase = Phase(data["phase"])
    options = _object(data["options"], "options", ("redeploy",), ("redeploy",))
    if options["redeploy"] not in (REDEPLOY_AUTO, REDEPLOY_ASK):
        raise ValueError(f"options.redeploy: {options['redeploy']!r} is not 'auto' or 'ask'")
    rng = data["rng"]
    if not isinstance(rng, str) or not _HEX.fullmatch(rng):
        raise ValueError(f"rng: expected 16 hex digits, not {rng!r}")
    if not isinstance(data["last"], dict):
        raise ValueError("last: expected an object")
    return GameState(
        board_name=board_name,
        turns=turns,
        turn=_int(data["turn"], "turn", 1, turns),
        current=_int(data["current"], "current", 0, n - 1),
        phase=phase,
        players=[_player(p, f"players[{i}]", i, n, turns) for i, p in enumerate(players_data)],
        regions=_regions(data["regions"], board, n),
        combos=_combos(data["combos"]),
        race_stack=_names(data["race_stack"], "race_stack", RACES, "race"),
        power_stack=_names(data["power_stack"], "power_stack", POWERS, "special power"),
        power_discard=_names(data["power_discard"], "power_discard", POWERS, "special power"),
        rng=int(rng, 16),
        t=_turn(data["turn_state"], len(board), n),
        options=dict(options),
        defenders=[_int(s, f"defenders[{k}]", 0, n - 1) for k, s in enumerate(_list(data["defenders"], "defenders"))],
        last=dict(data["last"]),
        abilities=_slots(data["abilities"], "abilities", "slot"),
        designs=designs,
    )


def _troop(data: Any, where: str, turns: int, declined: bool) -> Troop:
    troop = _troop_at_a_glance(data, turns, declined)
    return _troop_checked(data, where, turns, declined) if troop is None else troop


def _troop_checked(data: Any, where: str, turns: int, declined: bool) -> Troop:
    """:func:`_troop`, field by field: a ValueError names the first field at fault."""
    _object(data, where, TROOP_FIELDS, ("race", "power"))
    troop = Troop(
        race=_name(data["race"], f"{where}.race", RACES, "race"),
        power=_name(data["power"], f"{where}.power", POWERS, "special power"),
        declined=_bool(data.get("declined", False), f"{where}.declined"),
        hand=_int(data.get("hand", 0), f"{where}.hand", 0),
        picked_turn=_int(data.get("picked_turn", 0), f"{where}.picked_turn", 0, turns),
    )
    if troop.declined != declined:
        raise ValueError(f"{where}.declined: {'an In Decline' if declined else 'the Active'} race must say so")
    return troop


def _troop_at_a_glance(data: Any, turns: int, declined: bool) -> Troop | None:
    """The troop ``data`` holds if it passes every check of :func:`_troop` at a glance (as a region does in
    _regions: no message, so no field's name, is made), else None, and _troop names the field at fault."""
    if type(data) is dict and data.keys() <= _TROOP_KEYS:
        race, power = data.get("race"), data.get("power")
        hand, picked_turn = data.get("hand", 0), data.get("picked_turn", 0)
        if (
            type(race) is str
            and race in RACES
            and type(power) is str
            and power in POWERS
            and data.get("declined", False) is declined  # a JSON true or false, as the troop's place says
            and type(hand) is int
            and hand >= 0
            and type(picked_turn) is int
            and 0 <= picked_turn <= turns
        ):
            return Troop(race, power, declined, hand, picked_turn)
    return None


_TROOP_KEYS = frozenset(TROOP_FIELDS)
_PLAYER_KEYS = frozenset(PLAYER_FIELDS)


def _player(data: Any, where: str, seat: int, n: int, turns: int) -> PlayerState:
    if type(data) is dict and data.keys() <= _PLAYER_KEYS:  # at a glance first, as a region in _regions
        coins, declined, auto_passes = data.get("coins"), data.get("declined", []), data.get("auto_passes", 0)
        if (
            type(coins) is int
            and coins >= 0
            and type(auto_passes) is int
            and auto_passes >= 0
            and type(declined) is list
            and len(declined) <= 2
        ):
            active = _troop_at_a_glance(data["active"], turns, False) if "active" in data else None
            troops = [_troop_at_a_glance(t, turns, True) for t in declined]
            if (active is not None or "active" not in data) and all(t is not None for t in troops):
                return PlayerState(coins, active, troops, auto_passes)  # type: ignore[arg-type]  # none None
    return _player_checked(data, where, turns)


def _player_checked(data: Any, where: str, turns: int) -> PlayerState:
    """:func:`_player`, field by field: a ValueError names the first field at fault."""
    _object(data, where, PLAYER_FIELDS, ("coins",))
    declined = _list(data.get("declined", []), f"{where}.declined")
    if len(declined) > 2:
        raise ValueError(f"{where}.declined: {len(declined)} races In Decline; two at most")
    return PlayerState(
        coins=_int(data["coins"], f"{where}.coins", 0),
        active=_troop(data["active"], f"{where}.active", turns, False) if "active" in data else None,
        declined=[_troop(t, f"{where}.declined[{k}]", turns, True) for k, t in enumerate(declined)],
        auto_passes=_int(data.get("auto_passes", 0), f"{where}.auto_passes", 0),
    )


def _regions(data: Any, board: Board, n: int) -> list[RegionState]:
    regions = _list(data, "regions")
    if len(regions) != len(board):
        raise ValueError(f"regions: {len(regions)} regions; the {board.name} board has {len(board)}")
    out = []
    occupants = _occupants(n)
    mountain_at = _mountain_flags(board.name)
    for i, d in enumerate(regions):
        # Every stored state is read at every request: a region that passes every check below at a glance is
        # taken as it is; any other goes through _region, which checks each field and names the one at fault.
        # At a glance: an object of known fields; ``mountain`` a JSON true or false (the bool singletons)
        # that says what the board does; owner and tokens ints, not bools; (owner, race, tokens) one a
        # region may hold (``_occupants``), race looked up only if it is a name or None (hashable).
        if type(d) is dict and d.keys() <= _REGION_KEYS:
            owner, race, tokens, mountain = (
                d.get("owner", -1),
                d.get("race"),
                d.get("tokens", 0),
                d.get("mountain", False),
            )
            if (
                mountain is mountain_at[i]
                and type(owner) is int
                and type(tokens) is int
                and (race is None or type(race) is str)
                and (owner, race, tokens) in occupants
            ):
                out.append(RegionState(owner, race, tokens, mountain))
                continue
        out.append(_region(d, i, board, n))
    return out


_OCCUPANTS: dict[tuple[int, tuple[str, ...]], frozenset[tuple[int, str | None, int]]] = {}


def _occupants(n: int) -> frozenset[tuple[int, str | None, int]]:
    """What a region may hold in a game of ``n`` players, as (owner, race, tokens): nobody; the Lost Tribes
    (1 to the box's 18 tokens, no owner); a race of a seat (1 to its box's tokens: a count above the box is
    left to the full check, which lets it through to ``_check``'s message). Worked out once per player count
    and set of races (``rules.abilities.registered`` may add one)."""
    key = (n, tuple(RACES))
    found = _OCCUPANTS.get(key)
    if found is None:
        # Only the current registry's: a worker registers the hosts' designs as it meets them (rules/designs.py).
        for old in [k for k in _OCCUPANTS if k[1] != key[1]]:
            del _OCCUPANTS[old]
        held: set[tuple[int, str | None, int]] = {(-1, None, 0)}
        held.update((-1, LOST_TRIBE, tokens) for tokens in range(1, LOST_TRIBE_TOKENS + 1))
        for name, race in RACES.items():
            held.update((seat, name, tokens) for seat in range(n) for tokens in range(1, race.box_tokens() + 1))
        found = _OCCUPANTS[key] = frozenset(held)
    return found


@cache
def _mountain_flags(board_name: str) -> tuple[bool, ...]:
    """Whether each region of the board is a Mountain."""
    board = load_board(board_name)
    return tuple(i in board.mountains for i in range(len(board)))


_REGION_KEYS = frozenset(REGION_FIELDS)


def _region(d: Any, i: int, board: Board, n: int) -> RegionState:
    """One region of ``_regions``, every field checked; a ValueError names the first one at fault."""
    where = f"regions[{i}]"
    _object(d, where, REGION_FIELDS)
    race = d.get("race")
    if race is not None and race != LOST_TRIBE:
        _name(race, f"{where}.race", RACES, "race")
    r = RegionState(
        owner=_int(d.get("owner", -1), f"{where}.owner", -1, n - 1),
        race=race,
        tokens=_int(d.get("tokens", 0), f"{where}.tokens", 0),
        mountain=_bool(d.get("mountain", False), f"{where}.mountain"),
    )
    if r.mountain != (board.regions[i].terrain == "mountain"):
        raise ValueError(f"{where}.mountain: region {i} is a {board.regions[i].terrain} on this board")
    if (r.tokens == 0) != (race is None):
        raise ValueError(f"{where}: a race needs tokens there, and tokens a race")
    if race == LOST_TRIBE and r.tokens > LOST_TRIBE_TOKENS:
        raise ValueError(
            f"{where}.tokens: {r.tokens} is more than the {LOST_TRIBE_TOKENS} Lost Tribe tokens in the box"
        )
    if race == LOST_TRIBE and r.owner != -1:
        raise ValueError(f"{where}.owner: the Lost Tribes belong to no player")
    if race not in (None, LOST_TRIBE) and r.owner < 0:
        raise ValueError(f"{where}.owner: the {race} there belong to a player")
    if race is None and r.owner != -1:
        raise ValueError(f"{where}.owner: an empty region belongs to no player")
    return r


def _combos(data: Any) -> list[Combo]:
    combos = _list(data, "combos")
    if len(combos) > VISIBLE_COMBOS:
        raise ValueError(f"combos: {len(combos)} combos; {VISIBLE_COMBOS} at most are visible")
    out = []
    for k, c in enumerate(combos):
        if type(c) is list and len(c) == 3:  # at a glance first, as a region in _regions
            race, power, coins = c
            if (
                type(race) is str
                and race in RACES
                and type(power) is str
                and power in POWERS
                and type(coins) is int
                and coins >= 0
            ):
                out.append(Combo(race, power, coins))
                continue
        where = f"combos[{k}]"
        if not isinstance(c, list) or len(c) != 3:
            raise ValueError(f"{where}: expected [race, power, coins]")
        race = _name(c[0], f"{where}[0]", RACES, "race")
        power = _name(c[1], f"{where}[1]", POWERS, "special power")
        out.append(Combo(race, power, _int(c[2], f"{where}[2]", 0)))
    return out


def _names(data: Any, where: str, table: dict[str, Any], what: str) -> list[str]:
    names = _list(data, where)
    if set(map(type, names)) <= _STR and table.keys() >= set(names):  # at a glance first: every one a name known
        return list(names)
    return [_name(x, f"{where}[{k}]", table, what) for k, x in enumerate(names)]


_STR = {str}


def _turn(data: Any, regions: int, n: int) -> TurnState:
    where = "turn_state"
    _object(data, where, TURN_FIELDS)
    conquered = _list(data.get("conquered", []), f"{where}.conquered")
    attacked = _list(data.get("attacked", []), f"{where}.attacked")
    return TurnState(
        picked=_bool(data.get("picked", False), f"{where}.picked"),
        readied=_bool(data.get("readied", False), f"{where}.readied"),
        conquests=_int(data.get("conquests", 0), f"{where}.conquests", 0),
        conquered=[_int(r, f"{where}.conquered[{k}]", 0, regions - 1) for k, r in enumerate(conquered)],
        nonempty_conquered=_int(data.get("nonempty_conquered", 0), f"{where}.nonempty_conquered", 0),
        attacked=[_int(s, f"{where}.attacked[{k}]", 0, n - 1) for k, s in enumerate(attacked)],
        abilities=_slots(data.get("abilities", {}), f"{where}.abilities", "turn_slot"),
    )


def _slots(data: Any, where: str, kind: str) -> dict[str, Slot]:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object")
    out: dict[str, Slot] = {}
    for name, value in data.items():
        ability = ABILITIES.get(name)
        if ability is None:
            raise ValueError(f"{where}.{name}: not a race or special power of this game")
        slot_type = getattr(ability, kind)
        if slot_type is None:
            raise ValueError(f"{where}.{name}: {name} keeps no state here")
        out[name] = slot_type.from_json(value, f"{where}.{name}")
    return out


# -- what only the complete state can tell -----------------------------------------------------------------------
def _check(state: GameState) -> None:
    from .troops import aside  # the races' hooks

    # One pass over the regions (read at every request): each race's tokens on the board, each race's
    # holder, and the first region with more tokens than its race's box (reported after the holders and
    # the Lost Tribes, as each check came in turn).
    troops = [(seat, t) for seat, p in enumerate(state.players) for t in p.troops()]
    holders = {(seat, t.race) for seat, t in troops}
    on_board: dict[str | None, int] = {}  # tokens on the board by race (the Lost Tribes too)
    over_box = None
    for i, r in enumerate(state.regions):
        race = r.race
        if race is None:
            continue  # an empty region (no tokens: _regions saw to it)
        on_board[race] = on_board.get(race, 0) + r.tokens
        if race != LOST_TRIBE:
            if (r.owner, race) not in holders:
                raise ValueError(f"regions[{i}].race: player {r.owner} holds no {race}")
            if over_box is None and r.tokens > RACES[race].box_tokens():
                over_box = i
    lost_tribes = on_board.get(LOST_TRIBE, 0)
    if lost_tribes > LOST_TRIBE_TOKENS:
        raise ValueError(f"regions: {lost_tribes} Lost Tribe tokens; the box has {LOST_TRIBE_TOKENS}")
    if over_box is not None:
        # Components, "Race banners": never more tokens of a race than the box holds.
        r = state.regions[over_box]
        box = RACES[r.race].box_tokens()  # type: ignore[index]  # a race's region (above)
        raise ValueError(f"regions[{over_box}].tokens: {r.tokens} is more than the {box} {r.race} tokens in the box")
    for seat, troop in troops:
        used = on_board.get(troop.race, 0) + troop.hand + aside(state, troop)
        box = RACES[troop.race].box_tokens()
        if used > box:
            where = next(w for w, t in _troops(state.players[seat], f"players[{seat}]") if t is troop)
            raise ValueError(
                f"{where}.hand: {used} {troop.race} tokens on the board, in hand and aside; the box has {box}"
            )
    # Every banner and every badge is somewhere, once (rulebook, "Setting up the game"). Every name is known
    # (read above), so as many banners as races with every race among them is each race once (likewise the
    # badges); else _placed_once names the banner or badge at fault.
    banners = [c.race for c in state.combos] + state.race_stack + [t.race for _, t in troops]
    badges = [c.power for c in state.combos] + state.power_stack + state.power_discard
    badges += [t.power for _, t in troops if not t.declined or not POWERS[t.power].counts_toward_decline_limit]
    races, powers = game_races(state), game_powers(state)
    if not (
        sorted(banners) == races and len(set(banners)) == len(banners) and sorted(badges) == powers
    ):  # sorted: a name of another game (a design) is caught too
        _placed_once(state, races, powers)
    # The markers lie on occupied regions of the board.
    for name in state.abilities:
        ability = ABILITIES[name]
        for region, marker, count in ability.placed(state):
            if not 0 <= region < len(state.regions) or (count and not state.regions[region].tokens):
                raise ValueError(f"abilities.{name}: a {marker.label} on region {region}, which holds no race")
        ability.check(state)
    if len(set(state.defenders)) != len(state.defenders) or state.current in state.defenders:
        raise ValueError("defenders: each attacked player once, never the player on turn")


def _placed_once(state: GameState, races: list[str], powers: list[str]) -> None:
    """Refuse a banner or badge that is nowhere or in two places, or not of this game, naming where it is."""
    banners: dict[str, list[str]] = {race: [] for race in races}
    badges: dict[str, list[str]] = {power: [] for power in powers}
    for field, table, what in (("race", banners, "race"), ("power", badges, "special power")):
        stray = _stray(state, field, table)
        if stray is not None:
            raise ValueError(f"{stray[0]}: {stray[1]!r} is not a {what} of this game")
    for k, c in enumerate(state.combos):
        banners[c.race].append(f"combos[{k}]")
        badges[c.power].append(f"combos[{k}]")
    for name in state.race_stack:
        banners[name].append("race_stack")
    for field, names in (("power_stack", state.power_stack), ("power_discard", state.power_discard)):
        for name in names:
            badges[name].append(field)
    for seat, p in enumerate(state.players):
        for where, troop in _troops(p, f"players[{seat}]"):
            banners[troop.race].append(where)
            if not troop.declined or not POWERS[troop.power].counts_toward_decline_limit:
                badges[troop.power].append(where)
    for what, table in (("banner", banners), ("badge", badges)):
        for name, places in table.items():
            if len(places) != 1:
                where = f"in {', '.join(places)}" if places else "nowhere"
                field = places[-1] if places else ("race_stack" if what == "banner" else "power_stack")
                raise ValueError(f"{field}: the {name} {what} is {where}")


def _stray(state: GameState, field: str, table: dict[str, list[str]]) -> tuple[str, str] | None:
    """The first banner (``field`` "race") or badge ("power") of the state that is not one of ``table``'s
    (a design of another game), with where it is."""
    stacks = ("race_stack",) if field == "race" else ("power_stack", "power_discard")
    places: list[tuple[str, str]] = [(f"combos[{k}]", getattr(c, field)) for k, c in enumerate(state.combos)]
    for stack in stacks:
        places += [(stack, name) for name in getattr(state, stack)]
    for seat, p in enumerate(state.players):
        places += [(f"{where}.{field}", getattr(t, field)) for where, t in _troops(p, f"players[{seat}]")]
    return next(((where, name) for where, name in places if name not in table), None)


def _troops(p: PlayerState, where: str) -> list[tuple[str, Troop]]:
    out = [(f"{where}.active", p.active)] if p.active is not None else []
    return out + [(f"{where}.declined[{k}]", t) for k, t in enumerate(p.declined)]


# -- schema 1 -------------------------------------------------------------------------------------------------
def _upgrade_schema_1(old: dict[str, Any]) -> GameState:
    """A schema-1 state in the schema-2 layout: the core fields read as they are, the fields the races and
    powers kept in the core records moved into their own state."""
    claimed: set[str] = set()
    for ability in ABILITIES.values():
        claimed |= ability.schema_1_fields
    data = dict(old)
    data["schema"] = SCHEMA_VERSION
    data["abilities"] = {}
    data["regions"] = [
        _core_part(r, f"regions[{i}]", REGION_FIELDS, claimed)
        for i, r in enumerate(_list(old.get("regions"), "regions"))
    ]
    players = []
    for seat, p in enumerate(_list(old.get("players"), "players")):
        where = f"players[{seat}]"
        p = _core_part(p, where, PLAYER_FIELDS, claimed)
        if "active" in p:
            p["active"] = _core_part(p["active"], f"{where}.active", TROOP_FIELDS, claimed)
        if "declined" in p:
            p["declined"] = [
                _core_part(t, f"{where}.declined[{k}]", TROOP_FIELDS, claimed)
                for k, t in enumerate(_list(p["declined"], f"{where}.declined"))
            ]
        players.append(p)
    data["players"] = players
    data["turn_state"] = _core_part(old.get("turn_state"), "turn_state", TURN_FIELDS, claimed)
    state = _read(data)
    for ability in ABILITIES.values():
        if ability.schema_1_fields:
            ability.upgrade_schema_1(state, old)
    _check(state)
    return state.done()


def _core_part(data: Any, where: str, core: tuple[str, ...], claimed: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object")
    for key in data:
        if key not in core and key not in claimed:
            raise ValueError(f"{where}.{key}: unknown field")
    return {key: value for key, value in data.items() if key in core}


def schema_1_markers(old: dict[str, Any], field: str) -> dict[int, int]:
    """The regions of a schema-1 state with the marker ``field`` (true, or a count): region -> count."""
    out = {}
    for i, r in enumerate(old["regions"]):
        if field in r:
            value = r[field]
            count = int(_bool(value, f"regions[{i}].{field}")) if isinstance(value, bool) else value
            if _int(count, f"regions[{i}].{field}", 0):
                out[i] = count
    return out


def schema_1_troop_field(old: dict[str, Any], field: str) -> list[tuple[int, dict[str, Any], int]]:
    """The troops of a schema-1 state with ``field``: ``(seat, troop JSON, value)``."""
    out = []
    for seat, p in enumerate(old["players"]):
        troops = ([p["active"]] if "active" in p else []) + list(p.get("declined", []))
        for troop in troops:
            if field in troop:
                out.append((seat, troop, _int(troop[field], f"players[{seat}].{troop['race']}.{field}", 0)))
    return out


def schema_1_player_field(old: dict[str, Any], field: str) -> list[tuple[int, Any]]:
    """The players of a schema-1 state with ``field``: ``(seat, value)``."""
    return [(seat, p[field]) for seat, p in enumerate(old["players"]) if field in p]


def schema_1_turn_field(old: dict[str, Any], field: str) -> Any:
    """The value of ``turn_state.field`` in a schema-1 state, or None."""
    return old.get("turn_state", {}).get(field)
