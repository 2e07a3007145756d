"""Conquest (rulebook, "Conquering Regions", "Enemy Losses & Withdrawals", "Final Conquest Attempt")."""

from __future__ import annotations

from collections.abc import Sequence

from . import rng
from .abilities import RACES
from .actions import ACTIVE, IllegalAction
from .components import BASE_CONQUEST_COST, DIE_FACES, MAX_DIE_SHORTFALL
from .decline import vanish_if_gone
from .state import CONQUER, LOST_TRIBE, PICK, REDEPLOY, START, GameState, Troop
from .troops import abilities, acting_troop, declined_ghouls, has_flag, hooked


def roll_die(state: GameState) -> int:
    """The reinforcement die: 0, 0, 0, 1, 2, 3 (components.md)."""
    state.rng, face = rng.below(state.rng, len(DIE_FACES))
    return DIE_FACES[face]


def defence(state: GameState, region: int) -> int:
    """What a conqueror must beat beyond the base 2 (rulebook, "Conquering a Region").

    +1 for each Encampment, Fortress, Mountain and Troll's Lair, +1 for each Lost Tribe or other token
    (the attacker's own In Decline tokens included, rulings).
    """
    r = state.regions[region]
    return r.mountain + r.lair + r.fortress + r.encampments + r.tokens


def conquest_cost(state: GameState, seat: int, troop: Troop, region: int) -> int:
    """Tokens needed to conquer ``region`` with ``troop``, race and power discounts included (min 1)."""
    cost = BASE_CONQUEST_COST + defence(state, region)
    for ability in hooked(troop, "conquest_discount"):
        cost -= ability.conquest_discount(state, seat, troop, region)
    return cost if cost > 1 else 1


def conquest_refusal(
    state: GameState, seat: int, troop: Troop, region: int, held: list[int] | None = None
) -> str | None:
    """Why ``troop`` may not conquer ``region`` now (tokens aside), or None if it may.

    ``held``: the troop's regions, when the caller already has them.
    """
    return ConquestCheck(state, seat, troop, held).refusal(region)


class ConquestCheck:
    """The conquest rules for one troop in one state, with what they need worked out once:
    :func:`conquest_refusal` and :func:`conquest_cost` for region after region (``legal_actions``).

    ``held``: the troop's regions, when the caller already has them.
    """

    __slots__ = ("state", "seat", "troop", "held", "board", "sails", "discounts")

    def __init__(self, state: GameState, seat: int, troop: Troop, held: list[int] | None = None) -> None:
        self.state, self.seat, self.troop = state, seat, troop
        self.held = state.regions_of(seat, troop.race) if held is None else held
        self.board = state.board
        self.sails = has_flag(troop, "sails")
        self.discounts = hooked(troop, "conquest_discount")

    def cost(self, region: int) -> int:
        """:func:`conquest_cost`."""
        r = self.state.regions[region]
        cost = BASE_CONQUEST_COST + r.mountain + r.lair + r.fortress + r.encampments + r.tokens  # defence()
        for ability in self.discounts:
            cost -= ability.conquest_discount(self.state, self.seat, self.troop, region)
        return cost if cost > 1 else 1

    def refusal(self, region: int) -> str | None:
        """:func:`conquest_refusal`."""
        state, seat, troop, board, held = self.state, self.seat, self.troop, self.board, self.held
        if not 0 <= region < len(board.regions):
            return f"There is no region {region} on this board (0 to {len(board.regions) - 1})"
        r = state.regions[region]
        if r.owner == seat and r.race == troop.race:
            return f"Region {region} is already yours"
        if r.dragon or r.hero or r.hole:  # RegionState.immune
            marker = "the Dragon" if r.dragon else "Heroes" if r.hero else "a Hole-in-the-Ground"
            return f"Region {region} is immune: {marker} protects it"
        land = board.regions[region]
        water = land.is_water
        if water and not self.sails:
            return f"Region {region} is a {land.terrain}: only a Seafaring race may conquer Seas and the Lake"
        if r.owner >= 0 and r.owner != seat and not troop.declined:
            defender = state.players[r.owner]
            if defender.ally == seat and defender.active is not None and defender.active.race == r.race:
                return f"You are at peace with player {r.owner}'s {r.race} (Diplomat) until their next turn"
        if not held:
            # Rulebook, "First Conquest": a border region, or the shore of a Sea on the edge of the board.
            if region in board.entry:
                return None
            if not water and has_flag(troop, "enters_anywhere"):
                return None
            return f"A race's first conquest must be on a border region or the shore of a border Sea; {region} is not"
        if not board.neighbours[region].isdisjoint(held):
            return None
        if not water and has_flag(troop, "flies"):
            return None
        if any(a.reaches(state, seat, troop, region, held) for a in hooked(troop, "reaches")):
            return None
        return f"Region {region} is not adjacent to any region your {troop.race} hold"

    def candidates(self) -> Sequence[int]:
        """The regions worth asking :meth:`refusal` about, in ascending order: every region it accepts is
        among them.

        ``legal_actions`` asks only these instead of every region of the board: the regions next to those
        held or that an ability reaches beyond (Underworld's Caverns), or the entry regions for a first
        conquest, leaving out those held and, unless the troop sails, Seas and the Lake; every region for
        Flying and for Halflings' first conquest.
        """
        state, troop, board, held = self.state, self.troop, self.board, self.held
        if not held:
            if has_flag(troop, "enters_anywhere"):
                return range(len(board.regions))
            return board.entry_order if self.sails else board.land_entry_order
        if has_flag(troop, "flies"):
            return range(len(board.regions))
        neighbours = board.neighbours
        near: set[int] = set()
        for i in held:
            near |= neighbours[i]
        for ability in hooked(troop, "reaches"):
            extra = ability.reachable(state, self.seat, troop, held)
            if extra is None:
                return range(len(board.regions))
            near.update(extra)
        near.difference_update(held)
        if not self.sails:
            near &= board.land
        return sorted(near)


def conquest_candidates(state: GameState, seat: int, troop: Troop, held: list[int]) -> Sequence[int]:
    """:meth:`ConquestCheck.candidates`: the regions that may be conquered are among these."""
    return ConquestCheck(state, seat, troop, held).candidates()


def check_may_conquer(state: GameState, seat: int, kind: str) -> None:
    """Refuse a conquest outside the conquest steps of the player's own turn."""
    t = state.t
    if kind == ACTIVE:
        if state.phase not in (START, CONQUER):
            raise IllegalAction("Your conquests for this turn are over")
        if t.berserk_die is not None:
            return
    else:
        if state.phase not in (PICK, START, CONQUER):
            raise IllegalAction("Your conquests for this turn are over")
        if t.ghouls_done or t.conquests:
            raise IllegalAction("In Decline Ghouls conquer before your Active race; that moment has passed")


def ready_troops(state: GameState, seat: int) -> None:
    """Rulebook, "Ready your Troops": leave one token per region, take the others in hand.

    Done lazily, at the first step of the turn's conquests, so that a player who does nothing (or is
    auto-passed) keeps the board as it stood.
    """
    t = state.edit_turn()
    if t.readied:
        return
    t.readied = True
    troop = state.edit_player(seat).active
    assert troop is not None
    for i in state.regions_of(seat, troop.race):
        if state.regions[i].tokens > 1:
            r = state.edit_region(i)
            troop.hand += r.tokens - 1
            r.tokens = 1
    for ability in hooked(troop, "on_ready"):
        ability.on_ready(state, seat, troop)
    if state.phase == START:
        state.phase = CONQUER


def ready_ghouls(state: GameState, seat: int) -> Troop:
    ghouls = declined_ghouls(state, seat)
    assert ghouls is not None
    t = state.edit_turn()
    troop = state.edit_troop(seat, ghouls.race)
    if not t.ghouls_readied:
        t.ghouls_readied = True
        for i in state.regions_of(seat, troop.race):
            if state.regions[i].tokens > 1:
                r = state.edit_region(i)
                troop.hand += r.tokens - 1
                r.tokens = 1
    if state.phase == START:
        state.phase = CONQUER
    return troop


def prepare(state: GameState, seat: int, kind: str) -> Troop:
    """Ready the acting troop and return the editable copy of it."""
    acting_troop(state, seat, kind)  # a readable refusal for a troop the player does not have
    check_may_conquer(state, seat, kind)
    if kind == ACTIVE:
        ready_troops(state, seat)
        troop = state.edit_player(seat).active
        assert troop is not None
        state.edit_turn().ghouls_done = True
        return troop
    return ready_ghouls(state, seat)


def remove_occupant(state: GameState, region: int, attacker: int) -> bool:
    """Clear the region before its conquest; return whether it was non-empty.

    Rulebook, "Enemy Losses & Withdrawals": the defender takes the tokens back in hand, one discarded
    (Elves discard none); Mountains stay; Lairs and Fortresses go with the region; Encampments are
    never lost and are placed again.
    """
    r = state.edit_region(region)
    if not r.tokens:
        return False
    owner, race, tokens, camps = r.owner, r.race, r.tokens, r.encampments
    r.clear_occupant()  # Mountains stay: clear_occupant leaves them
    if race == LOST_TRIBE or owner < 0:
        return True
    assert race is not None
    troop = state.edit_troop(owner, race)
    if not troop.declined and owner != attacker:
        t = state.edit_turn()
        if owner not in t.attacked:
            t.attacked.append(owner)
    keeps_all = not troop.declined and RACES[race].keeps_tokens_when_conquered
    troop.hand += tokens if keeps_all else tokens - 1
    if camps:
        troop.camps += camps
    vanish_if_gone(state, owner, troop)
    return True


def occupy(state: GameState, seat: int, troop: Troop, region: int, tokens: int, kind: str) -> None:
    """Conquer ``region``, putting ``tokens`` of the troop's hand there."""
    nonempty = remove_occupant(state, region, seat)
    r = state.edit_region(region)
    r.owner, r.race, r.tokens = seat, troop.race, tokens
    troop.hand -= tokens
    if kind == ACTIVE:
        t = state.edit_turn()
        t.conquests += 1
        t.conquered.append(region)
        if nonempty:
            t.nonempty_conquered += 1
    for ability in hooked(troop, "on_conquer"):
        ability.on_conquer(state, seat, troop, region, nonempty)


def conquer(state: GameState, seat: int, region: int, kind: str) -> int | None:
    """A conquest paid in tokens (Berserk: with the die rolled before). Returns the die used, if any."""
    troop = prepare(state, seat, kind)
    refusal = conquest_refusal(state, seat, troop, region)
    if refusal:
        raise IllegalAction(refusal)
    if troop.hand < 1:
        raise IllegalAction("You need at least one token in hand to conquer")
    cost = conquest_cost(state, seat, troop, region)
    die = state.t.berserk_die if kind == ACTIVE else None
    if die is not None:
        # Berserk (rulings): the die was rolled first; a target hand + roll cannot pay ends the conquests.
        state.edit_turn().berserk_die = None
        cost = max(1, cost - die)
        if troop.hand < cost:
            end_conquests(state, seat)
            return die
        occupy(state, seat, troop, region, cost, kind)
        return die
    if troop.hand < cost:
        short = cost - troop.hand
        hint = " (you may try it as your final conquest with the die)" if short <= MAX_DIE_SHORTFALL else ""
        raise IllegalAction(f"Region {region} needs {cost} tokens, you have {troop.hand} in hand{hint}")
    occupy(state, seat, troop, region, cost, kind)
    return None


def final_conquest(state: GameState, seat: int, region: int, kind: str) -> int:
    """Rulebook, "Final Conquest Attempt": target chosen, then the die; conquests end either way."""
    troop = prepare(state, seat, kind)
    if kind == ACTIVE and any(a.name == "Berserk" for a in abilities(troop)):
        raise IllegalAction("Berserk rolls the die before naming the target: use berserk_roll, then conquer")
    refusal = conquest_refusal(state, seat, troop, region)
    if refusal:
        raise IllegalAction(refusal)
    if troop.hand < 1:
        raise IllegalAction("The final conquest needs at least one token in hand")
    cost = conquest_cost(state, seat, troop, region)
    short = cost - troop.hand
    if short <= 0:
        raise IllegalAction(f"You can conquer region {region} outright with {cost} tokens; no die needed")
    if short > MAX_DIE_SHORTFALL:
        raise IllegalAction(
            f"Region {region} needs {cost} tokens, you have {troop.hand}: more than 3 short, the die cannot help"
        )
    die = roll_die(state)
    if troop.hand + die >= cost:
        occupy(state, seat, troop, region, troop.hand, kind)
    if kind == ACTIVE:
        end_conquests(state, seat)
    else:
        state.edit_turn().ghouls_done = True
    return die


def abandon(state: GameState, seat: int, region: int) -> None:
    """Rulebook, "Abandoning a Region": empty it while readying troops, before the first conquest."""
    if state.phase not in (START, CONQUER) or state.t.conquests:
        raise IllegalAction("Regions can be abandoned only while readying troops, before your first conquest")
    if state.t.berserk_die is not None:
        # Rulings, "Berserk": the roll comes "before each conquest"; the conquest has begun, readying is over.
        raise IllegalAction("You rolled the die for Berserk: name the region to conquer with that roll")
    player = state.players[seat]
    if player.active is None:
        raise IllegalAction("You have no Active race to withdraw")
    if not 0 <= region < len(state.regions):
        raise IllegalAction(f"There is no region {region}")
    r = state.regions[region]
    if r.owner != seat or r.race != player.active.race:
        raise IllegalAction(f"Region {region} is not held by your {player.active.race}")
    ready_troops(state, seat)
    troop = state.edit_player(seat).active
    assert troop is not None
    r = state.edit_region(region)
    troop.hand += r.tokens
    troop.camps += r.encampments
    r.clear_occupant()
    # Not the end of the In Decline Ghouls' moment: rulings, they conquer "before any conquest of the Active
    # race", and abandoning is part of readying the troops, not a conquest.


def end_conquests(state: GameState, seat: int) -> None:
    """The conquests are over: redeployment begins (Skeletons reinforce here)."""
    t = state.edit_turn()
    t.berserk_die = None
    t.ghouls_done = True
    state.phase = REDEPLOY
    troop = state.players[seat].active
    if troop is not None and not t.skeletons_added:
        t.skeletons_added = True
        troop = state.edit_player(seat).active
        assert troop is not None
        for ability in hooked(troop, "on_conquests_end"):
            ability.on_conquests_end(state, seat, troop)
