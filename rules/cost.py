"""May a troop conquer a region, what does it cost, and why: one answer that ``legal_actions``, ``apply`` and
the pages all read (rulebook, "Conquering a Region", "First Conquest"; rulings).

    >>> from rules import new_game, conquest_breakdown
    >>> from rules.state import Troop
    >>> state = new_game(2, seed=1)
    >>> cost = conquest_breakdown(state, 0, Troop("Ratmen", "Commando", hand=12), 5)
    >>> cost.total, cost.refusal
    (2, None)
    >>> str(cost)
    '2 base + 1 Mountain - 1 Commando = 2'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .abilities import ABILITIES, RANK, Ability, hooks_of, names_with, shown, with_state
from .board import load_board
from .components import BASE_CONQUEST_COST
from .state import GameState, Troop

BASE = "base"
TOKENS = "tokens"
MOUNTAIN = "Mountain"
AT_LEAST_ONE = "at least 1"


class ConquestCost(NamedTuple):
    """What conquering a region takes: ``total`` tokens, made of the labelled ``parts`` (``("base", 2)``,
    ``("tokens", 3)``, ``("Mountain", 1)``, a marker's label and defence, a race's or power's name and
    discount, ``("at least 1", 1)``…), and ``refusal``: why the region may not be conquered at all, tokens
    aside (adjacency, water, immunity…), or None. ``rules/README.md`` lists the labels."""

    total: int
    parts: tuple[tuple[str, int], ...]
    refusal: str | None = None

    @property
    def allowed(self) -> bool:
        return self.refusal is None

    def __str__(self) -> str:
        words = [f"{self.parts[0][1]} {self.parts[0][0]}"] if self.parts else []
        for label, amount in self.parts[1:]:
            words.append(f"{'-' if amount < 0 else '+'} {abs(amount)} {label}")
        return f"{' '.join(words)} = {self.total}"


def conquest_breakdown(
    state: GameState, seat: int, troop: Troop, region: int, held: list[int] | None = None
) -> ConquestCost:
    """Whether ``troop`` may conquer ``region`` and what it costs, with the parts of the cost.

    ``held``: the troop's regions, when the caller already has them.
    """
    return ConquestCheck(state, seat, troop, held).breakdown(region)


def conquest_cost(state: GameState, seat: int, troop: Troop, region: int) -> int:
    """Tokens needed to conquer ``region`` with ``troop``: :func:`conquest_breakdown`'s total."""
    return ConquestCheck(state, seat, troop).breakdown(region).total


def conquest_refusal(
    state: GameState, seat: int, troop: Troop, region: int, held: list[int] | None = None
) -> str | None:
    """Why ``troop`` may not conquer ``region`` now (tokens aside), or None if it may:
    :func:`conquest_breakdown`'s refusal."""
    return ConquestCheck(state, seat, troop, held).refusal(region)


def conquest_candidates(state: GameState, seat: int, troop: Troop, held: list[int]) -> Sequence[int]:
    """:meth:`ConquestCheck.candidates`: the regions that may be conquered are among these."""
    return ConquestCheck(state, seat, troop, held).candidates()


Defences = dict[int, tuple[tuple[str, int], ...]]
_NO_MARKS: tuple[Defences, dict[int, str]] = ({}, {})
_MARKS = "board_marks"  # its key in GameState._by_hook
_SHIELD = "shield"  # the hook whose abilities with state (``with_state``) a check asks, and their key there


def board_marks(state: GameState) -> tuple[Defences, dict[int, str]]:
    """What the markers on the board do to conquests, by region: the parts they add to the defence
    (rulebook, "Conquering a Region": +1 for each marker that defends) and what makes a region immune
    (rulings: immune "to conquest and to every racial and special power"). The abilities are asked in the
    registry's order."""
    defences: dict[int, list[tuple[str, int]]] = {}
    immune: dict[int, str] = {}
    for name in sorted(state.abilities, key=RANK.__getitem__):
        ability = ABILITIES[name]
        if ability.markers:
            for region, marker, count in ability.placed(state):
                if marker.defence and count:
                    label = marker.label + ("s" if count > 1 else "")
                    defences.setdefault(region, []).append((label, marker.defence * count))
                if marker.immune and count:
                    immune.setdefault(region, marker.immune)
    return {region: tuple(parts) for region, parts in defences.items()}, immune


class ConquestCheck:
    """The conquest rules for one troop in one state, with what they need worked out once, for region after
    region (``legal_actions``).

    ``held``: the troop's regions, when the caller already has them. ``roll``: the die rolled before this
    conquest and the ability that rolled it (the Active troop's ``pending_roll``), or None.
    """

    __slots__ = (
        "state",
        "seat",
        "troop",
        "held",
        "board",
        "hooks",
        "sails",
        "discounts",
        "defences",
        "immune",
        "shields",
        "roll",
        "near",
        "left_open",
    )

    def __init__(self, state: GameState, seat: int, troop: Troop, held: list[int] | None = None) -> None:
        self.state, self.seat, self.troop = state, seat, troop
        self.held = state.regions_of(seat, troop.race) if held is None else held
        self.board = load_board(state.board_name)  # state.board, without the property's call
        hooks = troop.hooks  # hooks_of(troop), read as the troop keeps them once asked
        if hooks is None or troop.declined:
            hooks = hooks_of(troop)
        self.hooks = hooks
        self.sails = hooks.sails
        self.discounts = hooks.conquest_discount
        if not state.abilities:
            self.shields: tuple[Ability, ...] = ()
            self.defences, self.immune = _NO_MARKS
        else:
            # with_state and state.derived, their calls saved when the answers are known (a step or two each)
            cache = state._by_hook
            shields = marks = None
            if cache is not None:
                shields, marks = cache.get(_SHIELD), cache.get(_MARKS)
            self.shields = with_state(state, _SHIELD) if shields is None else shields
            self.defences, self.immune = state.derived(_MARKS, board_marks) if marks is None else marks
        #: The regions next to those held, once :meth:`candidates` worked them out (then asked instead of the
        #: neighbours of each region in turn).
        self.near: set[int] | None = None
        #: The regions :meth:`candidates` found on the board, not held, of a terrain the troop may enter and
        #: in its reach (or open to its first conquest): only markers and shields are left to ask of them
        #: (:meth:`candidate_refusal`). None until it listed them.
        self.left_open: frozenset[int] | set[int] | None = None
        self.roll: tuple[Ability, int] | None = None
        for ability in hooks.pending_roll:
            die = ability.pending_roll(state, seat, troop)
            if die is not None:
                self.roll = (ability, die)

    def breakdown(self, region: int) -> ConquestCost:
        """:func:`conquest_breakdown`."""
        refusal = self.refusal(region)
        if not 0 <= region < len(self.board.regions):
            return ConquestCost(0, (), refusal)
        parts: list[tuple[str, int]] = []
        total = self.price(region, parts)
        return ConquestCost(total, tuple(parts), refusal)

    def cost(self, region: int) -> int:
        """:func:`conquest_cost` (a region on the board)."""
        return self.price(region, None)

    def price(self, region: int, parts: list[tuple[str, int]] | None) -> int:
        """The tokens conquering ``region`` costs: the one formula, which also lists its labelled parts in
        ``parts`` when given a list (``legal_actions`` asks for the total alone, region after region)."""
        r = self.state.regions[region]
        # Rulebook, "Conquering a Region": 2 tokens, +1 per Mountain, marker and token there (the attacker's
        # own In Decline tokens included, rulings).
        total = BASE_CONQUEST_COST + r.tokens + r.mountain
        defences = self.defences.get(region) if self.defences else None
        if defences:
            total += sum([amount for _, amount in defences])
        if parts is not None:
            parts.append((BASE, BASE_CONQUEST_COST))
            if r.tokens:
                parts.append((TOKENS, r.tokens))
            if r.mountain:
                parts.append((MOUNTAIN, 1))
            if defences:
                parts += defences
        for ability in self.discounts:
            discount = ability.conquest_discount(self.state, self.seat, self.troop, region)
            total -= discount
            if discount and parts is not None:
                parts.append((ability.title or ability.name, -discount))  # as players read it (abilities.shown)
        roll = self.roll
        if roll is not None and roll[1]:
            total -= roll[1]
            if parts is not None:
                parts.append((f"{roll[0].name} die", -roll[1]))
        if total < 1:
            # Rulebook (Commando, Giants…): "A minimum of 1 token is still required."
            if parts is not None:
                parts.append((AT_LEAST_ONE, 1 - total))
            total = 1
        return total

    def refusal(self, region: int) -> str | None:
        """:func:`conquest_refusal`."""
        board = self.board
        if not 0 <= region < len(board.regions):
            return f"There is no region {region} on this board (0 to {len(board.regions) - 1})"
        r = self.state.regions[region]
        seat = self.seat
        owner = r.owner
        if owner == seat and r.race == self.troop.race:
            return f"Region {region} is already yours"
        if self.immune:
            immune = self.immune.get(region)
            if immune:
                return f"Region {region} is immune: {immune} protects it"
        if board.water[region] and not self.sails:
            sailors = names_with("sails")
            return (
                f"Region {region} is a {board.regions[region].terrain}: only a {sailors} race may conquer Seas "
                "and the Lake"
            )
        if owner >= 0 and owner != seat and self.shields:
            shielded = self.shielded(region)
            if shielded:
                return shielded
        if not self.held:
            # Rulebook, "First Conquest": a border region, or the shore of a Sea on the edge of the board.
            if region in board.entry:
                return None
            # Rulings: a race that may enter anywhere makes its first conquest on any region it may conquer
            # (by the Lake or an inner Sea for one that also sails; water was refused above otherwise).
            if self.hooks.enters_anywhere:
                return None
            for ability in self.hooks.entry:
                if region in ability.entry(self.state, seat, self.troop):
                    return None
            return f"A race's first conquest must be on a border region or the shore of a border Sea; {region} is not"
        near = self.near
        if (near is not None and region in near) or self.in_reach(region):
            return None
        return f"Region {region} is not adjacent to any region your {shown(self.troop.race)} hold"

    def candidate_refusal(self, region: int) -> str | None:
        """:meth:`refusal`, answered from what :meth:`candidates` showed when it left the region open
        (``left_open``: on the board, not held, land unless the troop sails, in reach or open to a first
        conquest), so that only markers and shields are left to ask (the question ``legal_actions`` asks
        region after region). Any other region, or one asked before the listing, gets the whole check."""
        left_open = self.left_open
        if left_open is None or region not in left_open:
            return self.refusal(region)
        immune = self.immune
        if immune and immune.get(region):
            return self.refusal(region)  # the message
        if self.shields:
            owner = self.state.regions[region].owner
            if owner >= 0 and owner != self.seat:
                return self.shielded(region)
        return None

    def allowed(self, regions: Iterable[int]) -> list[int]:
        """The regions among ``regions`` (on the board) that :meth:`refusal` accepts, in their order: what
        ``legal_actions`` asks of every candidate. A region :meth:`candidates` left open is asked only
        what :meth:`candidate_refusal` asks; one held by the troop, or a Sea or the Lake for a troop that
        does not sail, is refused without its message (every check refuses it, whichever comes first);
        any other gets the whole check."""
        left_open = self.left_open
        if left_open is None:
            refusal = self.refusal
            return [i for i in regions if refusal(i) is None]
        out = []
        water, sails, seat, race = self.board.water, self.sails, self.seat, self.troop.race
        states, immune, shields = self.state.regions, self.immune, self.shields
        for i in regions:
            if i in left_open:
                # candidate_refusal, without its messages
                if immune and i in immune:
                    continue
                if shields:
                    owner = states[i].owner
                    if owner >= 0 and owner != seat and self.shielded(i):
                        continue
                out.append(i)
            elif (water[i] and not sails) or (states[i].owner == seat and states[i].race == race):
                continue
            elif self.refusal(i) is None:
                out.append(i)
        return out

    def shielded(self, region: int) -> str | None:
        """Why a shield keeps the troop off ``region`` (held by an opponent), or None."""
        for ability in self.shields:
            shielded = ability.shield(self.state, self.seat, self.troop, region)
            if shielded:
                return shielded
        return None

    def in_reach(self, region: int) -> bool:
        """Whether ``region`` is next to a region the troop holds, or in the reach a power gives beyond the
        board's borders (Flying: any land region; Underworld: the Caverns). Never for a troop holding none."""
        held = self.held
        if not held:
            return False
        near = self.near
        if region in near if near is not None else not self.board.neighbours[region].isdisjoint(held):
            return True
        troop = self.troop
        if self.hooks.flies and not self.board.water[region]:
            return True
        return any(a.reaches(self.state, self.seat, troop, region, held) for a in self.hooks.reaches)

    def candidates(self) -> Sequence[int]:
        """The regions worth asking :meth:`refusal` about, in ascending order: every region it accepts is
        among them.

        ``legal_actions`` asks only these instead of every region of the board: the regions next to those
        held or that an ability reaches beyond (``reachable``), or the entry regions for a first conquest,
        leaving out those held and, unless the troop sails, Seas and the Lake; every region for a troop
        that flies, and for the first conquest of one that enters anywhere.
        """
        state, troop, board, held = self.state, self.troop, self.board, self.held
        if not held:
            # Every region listed here passes the first conquest's rule and the terrain (refusal).
            if self.hooks.enters_anywhere:
                self.left_open = board.everywhere if self.sails else board.land
                return range(len(board.regions))
            if self.hooks.entry:
                # A design that also enters by a terrain: those regions too (land unless the troop sails).
                more: set[int] = set()
                for ability in self.hooks.entry:
                    more.update(ability.entry(state, self.seat, troop))
                open_ = (board.entry | more) if self.sails else (board.land_entry | (more & board.land))
                self.left_open = frozenset(open_)
                return sorted(open_)
            if self.sails:
                self.left_open = board.entry
                return board.entry_order
            self.left_open = board.land_entry
            return board.land_entry_order
        neighbours = board.neighbours
        self.near = near = set().union(*[neighbours[i] for i in held])
        if self.hooks.flies:
            # Any land region is in reach (in_reach), and the regions next to those held; every region is
            # listed, those held and out of reach refused by the whole check.
            left_open = near | board.land
            left_open.difference_update(held)
            if not self.sails:
                left_open &= board.land
            self.left_open = left_open
            return range(len(board.regions))
        found = near.difference(held)
        if not self.sails:
            found &= board.land
        self.left_open = found
        if self.hooks.reaches:
            # An ability's reach beyond the borders: listed too, but asked the whole check.
            extra: set[int] = set()
            for ability in self.hooks.reaches:
                more = ability.reachable(state, self.seat, troop, held)
                if more is None:
                    return range(len(board.regions))
                extra.update(more)
            extra.difference_update(held)
            if not self.sails:
                extra &= board.land
            found = found | extra
        return sorted(found)
